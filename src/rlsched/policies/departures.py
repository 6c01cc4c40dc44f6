"""A departure model (``algo: departures``, :mod:`rlsched.train.departures`) as a policy: the
base heuristic's choice, left for the network's top-scored other valid server where that
score clears the model's threshold.

The base is computed from the observation alone (:data:`OBSERVED_HEURISTICS`), and the network
runs in numpy (:class:`~rlsched.agents.dag_net.DagScorer`): no torch on the acting path.
``learned:PATH`` loads it like any trained model; ``learned:PATH?threshold=T`` plays another
threshold (``inf``: the base alone).

A model may join several networks (``departure_members``; its meta's ``members``: each one's
weights file and offset, its own threshold). A server's score is then the mean over the
members of their score less their offset: an ensemble, whose averaged errors are smaller than
one network's.

A model may also carry a familiarity guard (its meta's ``familiar``,
:mod:`rlsched.policies.familiarity`): it departs only on workflows whose shape lies near one it
was trained on, and keeps the base's server on others. ``?familiar=off`` plays it without; so
does a trial guard whose settings say ``familiar: off`` (its trials judge every workflow).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np

from rlsched.agents.dag_net import PLAN_KEYS, REQUIRED_KEYS, DagScorer, stacked_kernel
from rlsched.errors import PolicyError
from rlsched.policies.base import Observation, SavedModelPolicy
from rlsched.policies.familiarity import Familiarity
from rlsched.runtime import set_torch_threads
from rlsched.zoo import resolve_model_dir

#: the model file in a departure model's folder
WEIGHTS = "dagnet.npz"


class DeparturePolicy(SavedModelPolicy):
    """The base heuristic with the learned departures (module docstring)."""

    category = "learned"
    stateless = True

    def __init__(
        self,
        path: str | Path,
        threshold: float | str | None = None,
        familiar: bool | str | None = None,
    ) -> None:
        from rlsched.agents.models import read_meta
        from rlsched.policies.learned import OBSERVED_HEURISTICS

        set_torch_threads()  # one BLAS thread: more only slow the small products (runtime)
        self.dir = resolve_model_dir(path)
        self.meta = read_meta(self.dir)
        if self.meta.get("algo") != "departures":
            raise PolicyError(f"{self.dir}: a {self.meta.get('algo')} model, not departures")
        self.algo = "departures"
        self.name = f"learned:{path}"
        members = self.meta.get("members") or [{"weights": WEIGHTS, "offset": 0.0}]
        #: each network and the offset its score is taken less (its own threshold)
        self.scorers = [DagScorer.load(self.dir / str(m["weights"])) for m in members]
        self.offsets = [float(m["offset"]) for m in members]
        #: the compiled ensemble in one call (networks of one shape), or None
        self._stacked = stacked_kernel(self.scorers, self.offsets) if len(members) > 1 else None
        if len({sc.num_servers() for sc in self.scorers}) > 1:
            raise PolicyError(f"{self.dir}: its networks were trained at different server counts")
        known = OBSERVED_HEURISTICS.get(self.env_id, {})
        self.base_name = str(self.meta["base"])
        if self.base_name not in known:
            raise PolicyError(
                f"{self.dir}: base {self.base_name!r} is not computed from {self.env_id}'s "
                f"observation; known: {', '.join(known) or 'none'}"
            )
        self._base = known[self.base_name]
        value = self.meta["threshold"] if threshold is None else threshold
        try:
            self.threshold = float(value)
        except (TypeError, ValueError):
            self.threshold = float("nan")
        if np.isnan(self.threshold):
            raise PolicyError(f"{self.dir}: threshold {value!r} is not a number (inf allowed)")
        #: the familiarity guard, or None (module docstring)
        self.guard = self._guard_of(familiar)
        #: departures taken since the policy was made (what a run reports)
        self.departures = 0
        #: decisions the guard kept on the base (an unfamiliar workflow)
        self.guarded = 0

    def _guard_of(self, familiar: bool | str | None) -> Familiarity | None:
        """The familiarity guard ``familiar`` asks for (on, off, or None: the model's own)."""
        # a spec's query reads on / off as booleans
        wanted = {True: True, "on": True, False: False, "off": False, None: None}.get(familiar, "?")
        if wanted == "?":
            raise PolicyError(f"familiar={familiar!r}: on or off")
        record = self.meta.get("familiar")
        if wanted and not record:
            raise PolicyError(f"{self.dir}: familiar=on, but this model has no familiarity guard")
        return Familiarity.from_meta(record) if record and wanted is not False else None

    def with_familiar(self, familiar: bool | str) -> DeparturePolicy:
        """The same networks with the familiarity guard on or off: what a trial guard whose
        settings name ``familiar`` plays (:mod:`rlsched.policies.trial`)."""
        other = copy.copy(self)
        other.guard = self._guard_of(familiar)
        return other

    def at_threshold(self, threshold: float) -> DeparturePolicy:
        """The same networks (shared, not loaded again) departing at ``threshold``: a
        candidate a trial guard plays beside this one (:mod:`rlsched.policies.trial`)."""
        other = copy.copy(self)
        other.threshold, other.name = float(threshold), f"{self.name} at threshold {threshold:g}"
        return other

    def check_env(self, env: Any) -> None:
        """Refuse an env without the keys the network reads, or with another server count or
        task padding than it was trained at (its inputs hold one slot per server and task)."""
        space = getattr(env, "observation_space", None)
        keys = set(getattr(space, "spaces", {}) or {})
        wanted = (*REQUIRED_KEYS, *PLAN_KEYS) if self.plan else REQUIRED_KEYS
        missing = [k for k in wanted if k not in keys]
        if missing:
            raise PolicyError(
                f"{self.dir}: this departure model reads {', '.join(missing)}, which this env's "
                f"observation lacks; it was trained with env arguments {self.env_kwargs}"
            )
        assert space is not None
        n = int(space.spaces["dag_oct"].shape[1])
        trained = self.scorer.num_servers()
        if n != trained:
            raise PolicyError(
                f"{self.dir}: trained at {trained} servers, this env has {n} "
                "(a departure model reads one slot per server)"
            )

    @property
    def scorer(self) -> DagScorer:
        """The (first) network."""
        return self.scorers[0]

    @property
    def plan(self) -> bool:
        """Whether a network reads PEFT's schedule (the env's ``dag_plan``)."""
        return any(s.plan for s in self.scorers)

    def scores(self, observation: Observation, base: int) -> np.ndarray:
        """The network's score of each server, as a departure from ``base`` (several: the mean
        of each one's score less its offset)."""
        assert isinstance(observation, dict)
        if len(self.scorers) == 1:
            z = self.scorer.score_one(observation, base)
            return z - np.float32(self.offsets[0]) if self.offsets[0] else z
        first = self.scorers[0]
        if self._stacked is not None and all(s.compiled for s in self.scorers):
            kernel, weights = self._stacked  # every network in one compiled call
            inputs = first.kernel_inputs(observation)
            return kernel(*inputs, int(base), first.relative_data, first.plan, *weights)
        total = np.zeros(first.num_servers(), np.float32)  # the same sums, network by network
        for s, o in zip(self.scorers, self.offsets, strict=True):
            total += s.score_one(observation, base)
            total -= np.float32(o)
        return total * np.float32(1.0 / len(self.scorers))

    def act(self, observation: Observation, mask: np.ndarray) -> int:
        mask = np.asarray(mask, dtype=bool)
        base = int(self._base(observation, mask))
        if self.threshold == np.inf or np.count_nonzero(mask) < 2:
            return base
        if self.guard is not None:
            assert isinstance(observation, dict)
            if not self.guard.familiar(observation):
                self.guarded += 1
                return base
        z = np.where(mask, self.scores(observation, base), -np.inf)
        z[base] = -np.inf
        best = int(z.argmax())  # the method: np.argmax's dispatch costs more than the work
        if z[best] >= self.threshold:
            self.departures += 1
            return best
        return base

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "kind": "learned", "algo": self.algo, "path": str(self.dir),
                "base": self.base_name, "threshold": self.threshold,
                "networks": len(self.scorers),
                "familiar": None if self.guard is None else self.guard.radius}  # fmt: skip
