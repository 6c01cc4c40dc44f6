"""The env contract: what every rlsched env implements, and the helpers they share.

Every env of :data:`rlsched.envs.ENV_IDS` subclasses :class:`RlschedEnv` (a
``gymnasium.Env`` with :class:`SnapshotMixin`), so that evaluation, the policies and the
reports read one set of names with plain attribute access:

- ``action_masks()``: a bool array over the (flattened) actions, True where an action is
  valid now.
- ``metrics()``: the episode so far as ``{name: float}``; the last step's ``info["metrics"]``
  is ``metrics()`` at the episode's end.
- ``dataset_name``: the name of the dataset the env draws its episodes from.
- ``METRICS``: ``{name: Metric}``, one :class:`Metric` per key of ``metrics()`` (label, unit,
  whether higher is better, whether a leaderboard shows it) plus, where it is the main metric,
  ``"reward"`` (the episode return). ``main_metric`` (the key whose :class:`Metric` has
  ``main=True``, else ``"reward"``; an env may set ``self.main_metric`` per instance when its
  scenario changes the objective), ``main_metric_direction`` and ``leaderboard_metrics`` are
  derived from it, on the class and on instances alike.
- ``snapshot()`` / ``restore()`` (below): the full simulator state, for search.
- ``advance(action)``: ``step`` without the observation, ``(reward, terminated, truncated,
  info)``; what a search's rollouts call when their base policy reads the env rather than the
  observation (``Policy.reads_observation``). The default steps and drops the observation;
  an env whose observation is costly skips building it (WorkflowOffloading).
- ``time``: every ``reset`` and ``step`` info holds ``info["time"]``, a float: simulated
  seconds, non-decreasing over an episode; which instant (the decision's, the end of the
  interval it governs, a trace's timestamp) each env documents (docs/envs.md has the table).
- Argument names: ``num_nodes`` is the number of machines an env schedules onto (nodes,
  servers, edge servers); ``episode_length`` is a count of work items per episode (instances,
  pods, VM requests, windows), the episode's length in decisions up to the items an env skips
  or lets wait. A duration in simulated seconds is a different quantity and keeps its own name
  (``episode_duration`` of LLMAutoscaling). Old names stay accepted for one version with a
  ``DeprecationWarning``: an env lists them in ``renamed_arguments`` (old -> new).

**Invalid actions (one rule for all envs).** An action that ``action_masks()`` marks False (or
one outside the action space) changes nothing in the simulated system; it ends the episode
(``terminated=True``) with reward ``-invalid_action_penalty``, ``info["invalid_action"] =
True``, ``info["metrics"]``, and it is counted in ``metrics()["invalid_actions"]``. Each env
documents its default penalty (chosen so that ending early never pays). An env whose masks are
always all True (LLMAutoscaling: a blocked scaling step is clipped, not refused) never sees one.

**Masks after the episode's end.** Once an episode has ended (after the step that returned
``terminated`` or ``truncated``, before the next ``reset``), ``action_masks()`` is all True: no
action is singled out any more, and a masked distribution over an all-False mask would be
undefined (MaskablePPO, the batched env's autoreset rows).

Snapshots are what search needs: the clairvoyant oracle (and rollout teachers) call
``snapshot()`` once per decision and ``restore()`` once per candidate action. A snapshot is a
deep copy of the unwrapped env's attributes, random generators included, so after
``restore(s)`` the same actions give bit-identical observations, rewards, terminations and
infos. Attributes an env never mutates in place during an episode (spaces, the spec, the
dataset and arrays derived from it) are listed in ``snapshot_static`` and shared by reference
instead of copied: that is what keeps a snapshot cheap (benchmarks/bench_snapshot.py).
Containers whose items never change in place (a log of records, a heap of tuples) are listed
in ``snapshot_shallow`` and copied one level deep.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol

import gymnasium as gym
import numpy as np

from rlsched.core.cluster import NodeView
from rlsched.core.copying import lean_deepcopy
from rlsched.data import load_dataset

Direction = Literal["higher", "lower"]

#: Attributes of every env that never change in place during an episode.
_COMMON_STATIC = ("action_space", "observation_space", "spec", "metadata", "render_mode")

#: The version that stops accepting the old argument names of ``renamed_arguments``.
RENAMES_REMOVED_IN = "0.3.0"


@dataclass(frozen=True)
class Metric:
    """How one metric of an env is shown and compared."""

    label: str
    """Column header in tables and figures."""
    unit: str = ""
    """Unit of the value (``"$"``, ``"s"``, ``"%"``, ``"pods"`` ...; empty: a plain number)."""
    higher_is_better: bool | None = None
    """Whether a higher value is better; None: neither (a descriptive figure)."""
    leaderboard: bool = False
    """Shown as a leaderboard column (in ``METRICS`` order, after the main metric)."""
    main: bool = False
    """The env's main metric: what verdicts, the oracle and sweep scores compare."""

    @property
    def direction(self) -> Direction | None:
        """``"higher"`` / ``"lower"`` (is better), None for a descriptive figure."""
        if self.higher_is_better is None:
            return None
        return "higher" if self.higher_is_better else "lower"


#: The episode return, as a metric (the main metric of an env whose reward is its objective).
REWARD_METRIC = Metric("reward", "", higher_is_better=True)


class _Derived:
    """A value computed from the class (or from the instance, whose own attribute of the same
    name wins: this is a non-data descriptor)."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn
        self.__doc__ = fn.__doc__

    def __get__(self, obj: Any, owner: type) -> Any:
        return self.fn(owner if obj is None else obj)


def _metric_spec(target: Any, name: str) -> Metric:
    if name in target.METRICS:
        return target.METRICS[name]
    return REWARD_METRIC if name == "reward" else Metric(name)


def _main_metric(target: Any) -> str:
    """The key of ``METRICS`` whose :class:`Metric` has ``main=True``, else ``"reward"``."""
    return next((k for k, m in target.METRICS.items() if m.main), "reward")


def _main_metric_direction(target: Any) -> Direction:
    """Whether a higher or a lower value of the main metric is better."""
    return target.metric_spec(target.main_metric).direction or "higher"


def _leaderboard_metrics(target: Any) -> tuple[str, ...]:
    """Metrics a leaderboard shows, in order: the main metric first (unless it is the
    reward, which has its own column), then the ``leaderboard`` ones of ``METRICS``."""
    main = target.main_metric
    first = (main,) if main != "reward" else ()
    return first + tuple(k for k, m in target.METRICS.items() if m.leaderboard and k != main)


class SnapshotMixin:
    """``snapshot()`` / ``restore()`` for an env whose state lives in its attributes."""

    #: Attributes shared (not copied) by snapshots: never mutated in place after they are set.
    snapshot_static: ClassVar[tuple[str, ...]] = ()
    #: Containers that snapshots copy one level deep (``copy.copy``): the container changes,
    #: its items never do in place (a log of records, a heap of tuples), so sharing the items
    #: is exact and spares a deep copy of each at every snapshot and restore.
    snapshot_shallow: ClassVar[tuple[str, ...]] = ()

    def _copy(self, state: dict[str, Any]) -> dict[str, Any]:
        return lean_deepcopy(
            state, (*_COMMON_STATIC, *self.snapshot_static), self.snapshot_shallow
        )

    def snapshot(self) -> EnvSnapshot:
        """A copy of the full simulator state (random generators included)."""
        state = {k: v for k, v in vars(self).items() if not isinstance(v, memoryview)}
        return EnvSnapshot(type(self), self._copy(state))

    def restore(self, snapshot: EnvSnapshot, reuse: bool = True) -> None:
        """Put the env back into the state ``snapshot`` was taken in. ``reuse=False``: the
        snapshot's own objects become the env's (no copy), so it must not be restored again."""
        if snapshot.env_type is not type(self):
            raise TypeError(
                f"snapshot of {snapshot.env_type.__name__} given to {type(self).__name__}"
            )
        vars(self).update(self._copy(snapshot.state) if reuse else snapshot.state)
        self._after_restore()

    def _after_restore(self) -> None:
        """Rebuild what a snapshot does not copy (memoryviews of copied arrays)."""


@dataclass(frozen=True)
class EnvSnapshot:
    """An opaque copy of one env's state; restore it with ``env.restore(snapshot)`` (any number
    of times: restoring copies it again)."""

    env_type: type
    state: dict[str, Any]


class FastRollouts(Protocol):
    """Compiled rollouts from one decision of an env (:meth:`RlschedEnv.fast_rollouts`), valid
    until the env steps."""

    def order(self) -> np.ndarray:
        """The base policy's ranking of the valid actions, its own action first."""
        ...

    def returns(self, candidates: list[int]) -> np.ndarray:
        """Each candidate's rollout: take it, then the base; the summed reward (only where
        the rollouts end with the env's current segment: :meth:`stops_with_workflow`)."""
        ...

    def stops_with_workflow(self) -> bool:
        """Whether the rollouts end with the env's current segment (one call to
        :meth:`returns` scores them all)."""
        ...

    def later(self, future: int | None) -> Any:
        """What a rollout plays after the current segment, with the sampled future of seed
        ``future`` (None: the env's own)."""
        ...

    def play(self, first: int, later: Any) -> tuple[np.ndarray, list[float]]:
        """One rollout: ``first``, then the base through ``later``; its rewards and the
        completion time of every unit of work (workflow) the episode has finished by the
        rollout's end, in order: the env's ``mean_completion`` is their mean."""
        ...


class RlschedEnv(SnapshotMixin, gym.Env):
    """The base class of every rlsched env: the contract of the module docstring."""

    # gym.Env declares metadata an instance variable (typed dict[str, Any]); a ClassVar here
    # would contradict it, so ruff's ClassVar rule is waived instead
    metadata = {"render_modes": ["ansi"], "render_fps": 4}  # noqa: RUF012
    #: ``{name: Metric}`` of ``metrics()`` (and ``"reward"`` where it is the main metric).
    METRICS: ClassVar[dict[str, Metric]] = {}
    main_metric: str = _Derived(_main_metric)  # type: ignore[assignment]
    main_metric_direction: Direction = _Derived(_main_metric_direction)  # type: ignore[assignment]
    leaderboard_metrics: tuple[str, ...] = _Derived(_leaderboard_metrics)  # type: ignore[assignment]
    #: Ways :meth:`resample_future` can draw the future besides the env's own (none: one way)
    FUTURE_SAMPLERS: ClassVar[tuple[str, ...]] = ()
    #: Old constructor argument -> its new name, accepted with a DeprecationWarning until
    #: :data:`RENAMES_REMOVED_IN`.
    renamed_arguments: ClassVar[dict[str, str]] = {}
    #: The clairvoyant oracle's base heuristic when no measured best is given (None: the
    #: oracle needs one named), its rollout horizon in decisions (None: to the episode's end)
    #: and how many candidate actions it rolls out (None: the oracle's default).
    oracle_base: ClassVar[str | None] = None
    oracle_horizon: ClassVar[int | None] = None
    oracle_top_k: ClassVar[int | None] = None
    #: At about how many decisions per episode the oracle searches (None: every one); an env
    #: whose full search is too slow (long episodes) sets it per instance.
    oracle_decisions: int | None = None
    #: The rollout policy's options for this env (``horizon``, ``futures``, ``top_k``;
    #: :class:`rlsched.policies.rollout.RolloutPolicy`), over the policy's defaults.
    rollout_options: ClassVar[dict[str, Any]] = {}
    #: Constructor arguments that only add to the observation: the dynamics, the masks, the
    #: rewards and the metrics are the same whatever their values (tests check it). `rlsched
    #: results` sets a learned model's own values of these in the row it is judged in.
    observation_args: ClassVar[tuple[str, ...]] = ()

    def advance(
        self, action: Any, rewarded: bool = True
    ) -> tuple[float, bool, bool, dict[str, Any]]:
        """``step(action)`` without the observation: ``(reward, terminated, truncated,
        info)`` (module docstring). This default builds the observation and drops it.
        ``rewarded=False`` (a caller that reads only the metrics): an env may skip computing the
        reward, NaN then, where that saves time (LLMAutoscaling); this default computes it."""
        _, reward, terminated, truncated, info = self.step(action)
        return float(reward), bool(terminated), bool(truncated), info

    def same_effect(self, a: Any, b: Any) -> bool:
        """Whether stepping with action ``a`` or ``b`` now leaves the env in the same state
        (the same rewards, metrics and future) but for what its observations show of the
        action itself: a trial guard plays the two rollouts of a trial as one while their
        actions have the same effect (:meth:`rlsched.policies.rollout.RolloutSearch.
        _paired_rollouts`). This default: the same action."""
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))

    def fast_rollouts(
        self, base: str, reward: str, horizon: int | None, to_segment_end: bool
    ) -> FastRollouts | None:
        """Compiled rollouts from the current decision with the env's own policy ``base`` and
        reward ``reward`` for ``horizon`` decisions (None: to the episode's end, or with
        ``to_segment_end`` to the end of the env's segment, e.g. a workflow), scored by their
        summed reward; or None (this default) where the env has none for these arguments. A
        search uses them in place of stepping copies of the env; they must take the same
        decisions (:mod:`rlsched.envs.offloading_fast`)."""
        return None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        renamed = cls.__dict__.get("renamed_arguments")
        if renamed and "__init__" in cls.__dict__:
            cls.__init__ = _accept_renamed(cls.__init__, renamed)  # type: ignore[method-assign]

    # ------------------------------------------------------------------ the contract
    @property
    def dataset_name(self) -> str | None:
        """The name of the dataset the episodes are drawn from."""
        raise NotImplementedError

    def action_masks(self) -> np.ndarray:
        """Valid actions now (all True once the episode has ended)."""
        raise NotImplementedError

    def metrics(self) -> dict[str, float]:
        """The episode so far, one value per key of ``METRICS`` (bar ``"reward"``)."""
        raise NotImplementedError

    def node_view(self, observation: Any) -> NodeView | None:
        """The observation as the generic node-scoring heuristics see it; None: this env has
        no node view (the generic heuristics do not apply)."""
        return None

    def _invalid_action_info(self, time: float) -> dict[str, Any]:
        """The info of the step that refuses an invalid action (the rule above): it ends the
        episode; the env has already counted it, so ``metrics()`` includes it."""
        return {"invalid_action": True, "time": time, "metrics": self.metrics()}

    def resample_future(self, rng: np.random.Generator, sampler: str | None = None) -> None:
        """Replace what the env has not revealed yet (arrivals to come, the env's own random
        draws) with a sample drawn with ``rng`` from the workload's generator or resampled
        history, keeping the present (cluster state, the decision at hand) as it is: the
        sampled futures of :class:`rlsched.policies.rollout.RolloutPolicy`. ``sampler``: one
        of :attr:`FUTURE_SAMPLERS` for this draw (None: the env's own way). The env's random
        generator is redrawn here; :meth:`_resample_workload` does the rest."""
        if sampler is not None:
            self.check_future_sampler(sampler, "sampler")
        self.np_random = np.random.default_rng(int(rng.integers(2**63)))
        self._resample_workload(rng, sampler)

    @classmethod
    def check_future_sampler(cls, sampler: str, what: str) -> None:
        """A ValueError naming ``what`` unless ``sampler`` is one of :attr:`FUTURE_SAMPLERS`."""
        if sampler not in cls.FUTURE_SAMPLERS:
            ways = f"by {', '.join(cls.FUTURE_SAMPLERS)}" if cls.FUTURE_SAMPLERS else "one way"
            raise ValueError(f"{what} {sampler!r}: {cls.__name__} samples futures {ways}")

    def _resample_workload(self, rng: np.random.Generator, sampler: str | None = None) -> None:
        """The env's part of :meth:`resample_future` (see :meth:`can_resample_future`);
        ``sampler`` is one of :attr:`FUTURE_SAMPLERS` or None (an env with one way has none)."""
        raise NotImplementedError(f"{type(self).__name__} cannot sample its future")

    @classmethod
    def can_resample_future(cls) -> bool:
        """Whether the env overrides :meth:`_resample_workload` (rollouts over sampled
        futures apply)."""
        return cls._resample_workload is not RlschedEnv._resample_workload

    def policy_applies(self, name: str) -> bool:
        """Whether the env's own policy ``name`` means something in this instance (False
        leaves it out of ``--policies all`` and of the spreads: WorkflowOffloading's
        ``all_cloud`` without a cloud)."""
        return True

    @classmethod
    def has_node_view(cls) -> bool:
        """Whether the env overrides :meth:`node_view` (the generic heuristics apply)."""
        return cls.node_view is not RlschedEnv.node_view

    #: ``metric_spec(name)``: the :class:`Metric` of ``name`` (``"reward"``: the episode
    #: return; an unknown name: its own label, no direction); on the class or an instance.
    metric_spec: Callable[[str], Metric] = _Derived(  # type: ignore[assignment]
        lambda t: functools.partial(_metric_spec, t)
    )

    # ------------------------------------------------------------------ shared helpers
    def _set_render_mode(self, render_mode: str | None) -> None:
        """Check ``render_mode`` against ``metadata["render_modes"]`` and keep it."""
        modes = self.metadata["render_modes"]
        if render_mode is not None and render_mode not in modes:
            raise ValueError(f"render_mode must be one of {modes}")
        self.render_mode = render_mode


def load_named(source: str | Any, default_name: str = "dataset") -> tuple[Any, str]:
    """``(dataset, name)`` of an env's ``dataset`` argument: a registry name is loaded with
    :func:`rlsched.data.load_dataset` and named by the dataset; any other object (a Dataset,
    workflows, an env-specific workload) is returned as given, named by its ``name`` attribute
    or ``default_name``."""
    if isinstance(source, str):
        ds = load_dataset(source)
        return ds, str(ds.name)
    return source, str(getattr(source, "name", default_name))


def _accept_renamed(init: Callable[..., None], renamed: Mapping[str, str]) -> Callable[..., None]:
    """``init`` taking each old argument name of ``renamed`` as its new name, with a
    DeprecationWarning; the signature seen by :mod:`inspect` stays ``init``'s."""

    @functools.wraps(init)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> None:
        for old in [k for k in kwargs if k in renamed]:
            new = renamed[old]
            if new in kwargs:
                raise TypeError(f"{type(self).__name__}: give {new!r} or {old!r}, not both")
            warnings.warn(
                f"{type(self).__name__}({old}=...) is deprecated: use {new}= "
                f"(the old name goes in rlsched {RENAMES_REMOVED_IN})",
                DeprecationWarning,
                stacklevel=2,
            )
            kwargs[new] = kwargs.pop(old)
        init(self, *args, **kwargs)

    return wrapper


def deprecated_attribute(env: Any, old: str, new: str) -> None:
    """Warn that attribute ``old`` of ``env`` is now ``new`` (kept until
    :data:`RENAMES_REMOVED_IN`)."""
    warnings.warn(
        f"{type(env).__name__}.{old} is deprecated: use .{new} "
        f"(the old name goes in rlsched {RENAMES_REMOVED_IN})",
        DeprecationWarning,
        stacklevel=3,
    )


def renamed_keys(cls: type[RlschedEnv], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """``kwargs`` with the old argument names of ``cls.renamed_arguments`` replaced by the new
    ones, warning as the constructor does (for argument checks made before it runs)."""
    renamed: Mapping[str, str] = cls.renamed_arguments
    out: dict[str, Any] = {}
    for k, v in kwargs.items():
        if k in renamed:
            warnings.warn(
                f"{cls.__name__}({k}=...) is deprecated: use {renamed[k]}= "
                f"(the old name goes in rlsched {RENAMES_REMOVED_IN})",
                DeprecationWarning,
                stacklevel=3,
            )
            k = renamed[k]
        out[k] = v
    return out


def main_metric_of(env: Any) -> tuple[str, Direction]:
    """``(metric, direction)`` of an env (wrapped or not, or an env class)."""
    base: RlschedEnv | type[RlschedEnv] = env if isinstance(env, type) else env.unwrapped
    return base.main_metric, base.main_metric_direction


def summed_return(rewards: Any) -> float:
    """A rollout's return as a search sums it: the first reward plus the rest in order (the
    patent's ``Q = r + V`` with gamma 1)."""
    return float(rewards[0] + sum(rewards[1:]))


def episode_value(metric: str, reward: float, metrics: dict[str, float]) -> float:
    """The value of ``metric`` for one episode (``reward`` is the episode return)."""
    if metric == "reward":
        return float(reward)
    v = metrics.get(metric)
    return float("nan") if v is None else float(v)
