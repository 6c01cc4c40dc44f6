"""Train / validation / test data of every env, fixed in one place.

The test set of an env is what ``rlsched results`` and the docs' verdicts are measured on; no
model is trained or selected on it. :func:`check_validation` refuses a training config whose
validation set (its ``eval_dataset``, or its training set when it has none) shares a workflow,
a trace or a generator seed with the env's test set: model selection on test data would make
every verdict after it optimistic.

What "shares" means, per dataset family (:func:`units`):

- ``wfinstances:A,B``: the named workflow executions (``all``: every shipped one);
- ``wfcommons:RECIPE?seed=S`` and every ``synthetic:KIND?seed=S``: the generator and its seed;
- ``alibaba:cloudsimpy-jobs?part=P``: the trace and its time-ordered part (no part: all);
- ``azure-llm:TRACE?start=S&end=E``: the trace's requests recorded in ``[S, E)`` seconds
  (no window: all of them), so the two halves of a time split share nothing;
- any other name (``azure-llm:conv``, ``file:PATH``, ...): the trace itself.

An env may have other named splits beside its default (:data:`VARIANTS`); a training config
picks one with ``split``, and its datasets are checked against that split's test set.

Test episodes start at seed :data:`TEST_SEED`; training envs are seeded from the config's
``seed`` and validation episodes from 10,000 (``rlsched.train``), so episode seeds never meet.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rlsched.data.registry import parse_name
from rlsched.data.wfformat import WFINSTANCES
from rlsched.errors import ConfigError

#: Seed of the first test episode (every later test episode adds 1).
TEST_SEED = 1000

#: The demo's sets (ServerlessPlacement-v0): real executions for training and test, unseen
#: generated workflows of a training family for model selection.
WF_TRAIN = "wfinstances:montage-58,epigenomics-41,1000genome-52,srasearch-22"
WF_VALIDATION = "wfcommons:epigenomics?tasks=60&seed=1&workflows=3"
WF_TEST = "wfinstances:blast-43,helloworld-10"


@dataclass(frozen=True)
class EnvSplit:
    """The datasets of one env; ``env_kwargs`` apply to all three."""

    env_id: str
    train: str
    validation: str
    test: str
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    #: test episodes per budget of ``rlsched results``
    episodes: Mapping[str, int] = field(default_factory=lambda: {"quick": 3, "full": 10})
    note: str = ""


SPLITS: dict[str, EnvSplit] = {
    s.env_id: s
    for s in (
        EnvSplit(
            "rlsched/ServerlessPlacement-v0", WF_TRAIN, WF_VALIDATION, WF_TEST,
            note="real WfInstances executions; validation: wfcommons epigenomics (seed 1)",
        ),
        EnvSplit(
            "rlsched/KubeScheduling-v0",
            "alibaba:cloudsimpy-jobs?part=train",
            "alibaba:cloudsimpy-jobs?part=validation",
            "alibaba:cloudsimpy-jobs?part=test",
            note="the Alibaba jobs in submission order: first 60% / next 20% / last 20%",
        ),
        EnvSplit(
            "rlsched/WorkflowOffloading-v0", WF_TRAIN, WF_VALIDATION, WF_TEST,
            episodes={"quick": 2, "full": 10},
            note="as ServerlessPlacement: real executions, wfcommons validation",
        ),
        EnvSplit(
            "rlsched/VMPlacement-v0",
            "synthetic:vm?seed=0",
            "synthetic:vm?seed=1",
            "synthetic:vm?seed=2",
            episodes={"quick": 2, "full": 10},
            note="three traces of the Huawei-statistics generator (the real trace is "
            "CC-BY-NC and not shipped); the server count comes from the scenario preset",
        ),
        EnvSplit(
            "rlsched/PodRebalancing-v0",
            "synthetic:pods?seed=0",
            "synthetic:pods?seed=1",
            "synthetic:pods?seed=2",
            env_kwargs={"max_pods_per_node": 30, "action_features": True, "migration_cost": 0.003},
            note="three generated clusters; the settings of configs/pod_rebalancing.yaml",
        ),
        EnvSplit(
            "rlsched/LLMAutoscaling-v0",
            "azure-llm:conv",
            "azure-llm:conv",
            "azure-llm:code",
            env_kwargs={"episode_duration": 300.0},
            episodes={"quick": 2, "full": 5},
            note="trained and selected on the conversation trace, tested on the code trace",
        ),
    )
}


#: The seconds where the code trace's time split cuts it (an hour, 8,819 requests: 5,740 before,
#: 3,079 after).
CODE_SPLIT_S = 1800

#: Other splits, by ``(env id, name)``: experiments whose test set is not the env's default.
#: A model trained under one must be judged on that split's test set, not the default's.
VARIANTS: dict[tuple[str, str], EnvSplit] = {
    ("rlsched/LLMAutoscaling-v0", "code-time"): EnvSplit(
        "rlsched/LLMAutoscaling-v0",
        "azure-llm:conv",
        "azure-llm:conv",
        f"azure-llm:code?start={CODE_SPLIT_S}",
        env_kwargs={"episode_duration": 300.0},
        episodes={"quick": 2, "full": 30},
        note=f"a time split of the code trace: its first {CODE_SPLIT_S} s "
        f"(azure-llm:code?end={CODE_SPLIT_S}) may be trained on beside conv, the rest is the test",
    ),
}


def find_split(env_id: str, name: str = "default") -> EnvSplit | None:
    """``env_id``'s default split (None if it has none), or the named one of :data:`VARIANTS`
    (an unknown name: ConfigError listing the env's splits)."""
    if name == "default":
        return SPLITS.get(env_id)
    if (env_id, name) not in VARIANTS:
        known = sorted(n for e, n in VARIANTS if e == env_id)
        raise ConfigError(
            f"{env_id}: no split named {name!r} (known: {', '.join(['default', *known])})"
        )
    return VARIANTS[env_id, name]


def split_of(env_id: str, name: str = "default") -> EnvSplit:
    """:func:`find_split`, for an env that must have one."""
    split = find_split(env_id, name)
    if split is None:
        raise ConfigError(f"{env_id}: no train / validation / test split is defined")
    return split


def _window(name: str) -> tuple[float, float] | None:
    """The recorded seconds an ``azure-llm`` name keeps (None: not a windowed trace name)."""
    scheme, _, params = parse_name(name)
    if scheme != "azure-llm":
        return None
    try:
        return float(params.get("start") or 0.0), float(params.get("end") or "inf")
    except ValueError:  # the loader names the bad value; here the whole trace, to be safe
        return 0.0, float("inf")


def units(name: str) -> set[tuple[str, ...]]:
    """What a dataset name draws on: workflows, traces or generator seeds (module docstring)."""
    scheme, path, params = parse_name(name)
    if scheme == "wfinstances":
        names = list(WFINSTANCES) if path == "all" else path.split(",")
        return {("wfinstances", n.strip()) for n in names if n.strip()}
    if scheme == "wfcommons" or scheme.startswith("synthetic"):
        return {(scheme, path, str(params.get("seed", "0")))}
    if scheme == "alibaba":
        part = params.get("part")
        parts = ("train", "validation", "test") if part in (None, "all") else (str(part),)
        return {("alibaba", path, p) for p in parts}
    return {(scheme, path)}


def overlap(a: str, b: str) -> set[tuple[str, ...]]:
    shared = units(a) & units(b)
    wa, wb = _window(a), _window(b)
    if shared and wa is not None and wb is not None:  # one trace: shared where the windows meet
        lo, hi = max(wa[0], wb[0]), min(wa[1], wb[1])
        return {(*u, f"seconds {lo:g}-{hi:g}") for u in shared} if lo < hi else set()
    return shared


def shared_text(shared: set[tuple[str, ...]]) -> str:
    """What :func:`overlap` found, for an error message (``wfinstances:blast-43, ...``)."""
    return ", ".join(sorted(":".join(u) for u in shared))


def check_validation(
    env_id: str, validation: str | None, source: str = "config", split_name: str = "default"
) -> None:
    """Refuse a validation set that shares data with ``env_id``'s test set (of the split
    ``split_name``)."""
    split = find_split(env_id, split_name)
    if split is None or not validation or not isinstance(validation, str):
        return  # no split for this env, or a dataset given as an object
    shared = overlap(validation, split.test)
    if shared:
        raise ConfigError(
            f"{source}: the validation set {validation!r} shares {shared_text(shared)} with "
            f"{env_id}'s test set {split.test!r} (rlsched.splits): select models on data the "
            f"test never uses, e.g. {split.validation!r}"
        )
