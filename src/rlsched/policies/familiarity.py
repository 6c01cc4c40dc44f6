"""Whether a workflow looks like the ones a model was trained on: a guard for learned
departures (:class:`~rlsched.policies.departures.DeparturePolicy`).

A departure network reads the workflow's graph, and what a departure is worth depends on the
family: on families it never saw, its departures lose (docs/offloading.md, rounds C2-C4). So
a model may carry a *reference*: the shape profile of every workflow it was trained on, and a
radius. At each decision the current workflow's profile (:func:`profile`, from the ``dag_*``
observation alone) is standardised by the reference's spread, and the policy departs only if
the nearest reference workflow lies within the radius; otherwise it keeps its base's server.

The profile is scale-free (shares, ratios and spreads, no seconds or megabytes): scale did not
tell the families apart (``wf_congested_family_scale.py``), shape may.

The radius (:func:`calibrate`) is the largest distance from a reference workflow to its
nearest one *in another training dataset*: about how far a fresh graph of a trained family
lies, since each family appears in more than one dataset.

A guard may also be *vetted* (:func:`vet`): the model plays new workflows beside its base,
each reference workflow takes the outcomes of the workloads whose workflows lie nearest to it,
and only those whose departures paid on average stay open. The policy then departs only where
the current workflow's nearest reference workflow is within the radius *and* open: shaped
like a training graph is not enough where the departures lost on new graphs of that shape.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from rlsched.errors import PolicyError

#: the profile's entries, in order (:func:`profile`)
FEATURES = (
    "log_tasks",  # log of the task count
    "levels_share",  # levels of the graph / tasks: 1 for a chain, small for a wide graph
    "width_share",  # tasks on the widest level / tasks
    "entry_share",  # tasks without parents / tasks
    "sink_share",  # tasks without children / tasks
    "edges_per_task",  # data links / tasks
    "fan_out",  # most children of one task / tasks
    "fan_in",  # most parents of one task / tasks
    "work_cv",  # spread of task work: std / mean
    "critical_share",  # longest upward rank / total work (1 / the graph's parallelism)
    "data_cv",  # spread of the data each task writes: std / mean
)

# the dag_tasks columns the profile reads (WorkflowOffloadingEnv's class docstring)
_WORK, _DATA, _RANK, _DEPTH, _SINK, _ENTRY, _VALID = 0, 3, 4, 5, 8, 9, 11


def _cv(x: np.ndarray) -> float:
    mean = float(x.mean())
    return float(x.std() / mean) if mean > 0 else 0.0


def profile(observation: Mapping[str, np.ndarray]) -> np.ndarray:
    """The current workflow's shape profile (:data:`FEATURES`), from the ``dag_tasks`` and
    ``dag_links`` observation keys (``dag=True``); what the template alone decides, so equal
    at every decision of one workflow."""
    try:
        rows, links = observation["dag_tasks"], observation["dag_links"]
    except KeyError as err:
        raise PolicyError(f"a familiarity guard reads {err.args[0]!r}, absent here") from None
    n = int(np.count_nonzero(rows[:, _VALID]))
    if n == 0:
        raise PolicyError("a familiarity guard needs a workflow in dag_tasks (none is valid)")
    rows, edge = rows[:n], links[:n, :n] > 0  # links[child, parent]
    work = rows[:, _WORK].astype(np.float64)
    depth = rows[:, _DEPTH].astype(np.int64)
    levels = np.bincount(depth - depth.min())
    total = float(work.sum())
    return np.array(
        [
            np.log(n),
            len(levels) / n,
            levels.max() / n,
            rows[:, _ENTRY].mean(),
            rows[:, _SINK].mean(),
            edge.sum() / n,
            edge.sum(axis=0).max() / n,
            edge.sum(axis=1).max() / n,
            _cv(work),
            float(rows[:, _RANK].max()) / total if total > 0 else 1.0,
            _cv(rows[:, _DATA].astype(np.float64)),
        ],
        np.float64,
    )


class Familiarity:
    """A reference set of profiles and a radius (module docstring); :meth:`familiar` answers
    for one observation, remembering each workflow's answer."""

    def __init__(
        self,
        reference: np.ndarray,
        scale: np.ndarray,
        radius: float,
        open_: np.ndarray | None = None,
    ) -> None:
        self.reference = np.asarray(reference, np.float64)
        self.scale = np.asarray(scale, np.float64)
        self.radius = float(radius)
        #: per reference workflow, whether departures near it stay open (None: all, unvetted)
        self.open = None if open_ is None else np.asarray(open_, bool)
        if self.open is not None and self.open.shape != (len(self.reference),):
            raise PolicyError(
                f"a familiarity record's open flags number {self.open.shape}, its reference "
                f"{len(self.reference)} workflows"
            )
        if self.reference.ndim != 2 or self.reference.shape[1] != len(FEATURES):
            raise PolicyError(
                f"a familiarity reference holds rows of {len(FEATURES)} features "
                f"({', '.join(FEATURES)}); got shape {self.reference.shape}"
            )
        if self.scale.shape != (len(FEATURES),) or not np.all(self.scale > 0):
            raise PolicyError(f"a familiarity scale is {len(FEATURES)} positive numbers")
        self._seen: dict[tuple[int, float, float], bool] = {}

    def distances(self, prof: np.ndarray) -> np.ndarray:
        """Standardised distance from a profile to each reference workflow."""
        d = (self.reference - prof) / self.scale
        return np.sqrt((d * d).sum(axis=1))

    def distance(self, prof: np.ndarray) -> float:
        """Standardised distance from a profile to its nearest reference workflow."""
        return float(self.distances(prof).min())

    def nearest(self, prof: np.ndarray) -> int | None:
        """The nearest reference workflow's row, or None beyond the radius."""
        d = self.distances(prof)
        k = int(np.argmin(d))
        return k if d[k] <= self.radius else None

    def allows(self, prof: np.ndarray) -> bool:
        """Whether a workflow of this profile may depart: within the radius of its nearest
        reference workflow, and that one open (where vetted)."""
        k = self.nearest(prof)
        return k is not None and (self.open is None or bool(self.open[k]))

    def familiar(self, observation: Mapping[str, np.ndarray]) -> bool:
        """Whether the current workflow lies within the radius of a reference workflow."""
        rows = observation["dag_tasks"]
        # one workflow's template decides these at every decision; cheap to read
        key = (int(np.count_nonzero(rows[:, _VALID])), float(rows[:, _WORK].sum()),
               float(rows[:, _RANK].sum()))  # fmt: skip
        answer = self._seen.get(key)
        if answer is None:
            answer = self.allows(profile(observation))
            if len(self._seen) > 10_000:  # a long-running service meets many workflows
                self._seen.clear()
            self._seen[key] = answer
        return answer

    def to_meta(self, datasets: Iterable[str] = ()) -> dict[str, Any]:
        """The self-describing record a model's ``meta.json`` keeps (``familiar``)."""
        return {"features": list(FEATURES), "reference": self.reference.round(9).tolist(),
                "scale": self.scale.round(9).tolist(), "radius": round(self.radius, 9),
                "datasets": list(datasets),
                **({} if self.open is None else {"open": self.open.tolist()})}  # fmt: skip

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any]) -> Familiarity:
        if list(meta.get("features", [])) != list(FEATURES):
            raise PolicyError(
                f"a familiarity record of features {meta.get('features')}; this version "
                f"reads {list(FEATURES)}"
            )
        open_ = meta.get("open")
        return cls(np.array(meta["reference"]), np.array(meta["scale"]), float(meta["radius"]),
                   None if open_ is None else np.array(open_, bool))  # fmt: skip


def calibrate(groups: Mapping[str, np.ndarray]) -> Familiarity:
    """A guard from the profiles of each training dataset (``{name: rows}``, at least two
    datasets): the scale is each feature's spread over all of them (a feature that does not
    vary counts with 1e-3), the radius the largest distance from a workflow to its nearest one
    in *another* dataset (module docstring)."""
    if len(groups) < 2:
        raise PolicyError("a familiarity radius needs profiles of at least two datasets")
    ref = np.concatenate([np.atleast_2d(g) for g in groups.values()])
    scale = np.maximum(ref.std(axis=0), 1e-3)
    radius = 0.0
    for name, rows in groups.items():
        others = np.concatenate([np.atleast_2d(g) for k, g in groups.items() if k != name])
        probe = Familiarity(others, scale, 0.0)
        radius = max(radius, *(probe.distance(r) for r in np.atleast_2d(rows)))
    return Familiarity(ref, scale, radius)


def vet(guard: Familiarity, outcomes: Iterable[tuple[np.ndarray, Iterable[float]]]) -> Familiarity:
    """``guard`` with each reference workflow open or closed by how the departures did on new
    workloads: ``outcomes`` holds, per workload, the profiles of its workflows and its
    episodes' values (lower is better, 0 the base's: e.g. mean completion relative to the
    base's, less 1). Each workflow within the radius hands its workload's episodes to its
    nearest reference workflow; a reference workflow stays open where the mean of what it was
    handed is below 0, and closes where it is not or it was handed nothing (no evidence)."""
    handed: dict[int, list[float]] = {}
    for profiles, values in outcomes:
        vals = [float(v) for v in values]
        for k in {guard.nearest(p) for p in np.atleast_2d(profiles)} - {None}:
            assert k is not None
            handed.setdefault(k, []).extend(vals)
    open_ = np.array([k in handed and float(np.mean(handed[k])) < 0.0
                      for k in range(len(guard.reference))])  # fmt: skip
    return Familiarity(guard.reference, guard.scale, guard.radius, open_)


def dataset_profiles(
    make_env: Callable[[str], Any], dataset: str, seed: int = 0, max_episodes: int = 1000
) -> np.ndarray:
    """The profile of every workflow a dataset offers (one row each, in the dataset's order):
    episodes of PEFT's play (any play visits the same workflows) in ``make_env(dataset)``
    from seed ``seed`` until each workflow has been drawn (at most ``max_episodes``)."""
    from rlsched.policies.learned import OBSERVED_HEURISTICS

    env = make_env(dataset)
    u = env.unwrapped
    base = OBSERVED_HEURISTICS[env.spec.id if env.spec else ""]["peft"]
    rows: dict[int, np.ndarray] = {}
    for e in range(max_episodes):
        obs, _ = env.reset(seed=seed + e)
        done = False
        while not done and len(rows) < u.num_templates:  # no further than every one seen
            if u.current_template not in rows:  # a profile per workflow, not per decision
                rows[u.current_template] = profile(obs)
            obs, _, term, trunc, _ = env.step(int(base(obs, u.action_masks())))
            done = term or trunc
        if len(rows) == u.num_templates:
            break
    env.close()
    if len(rows) < u.num_templates:
        raise PolicyError(
            f"{dataset}: {max_episodes} episodes drew {len(rows)} of its {u.num_templates} "
            "workflows; a familiarity reference needs them all"
        )
    return np.array([rows[k] for k in sorted(rows)])
