"""Sweep configs: a YAML file -> a deterministic list of trials.

A sweep crosses envs (each with its datasets and constructor arguments) with policies
(heuristics, ``learned:PATH``) and training algorithms (with hyperparameters, searched on a grid
or sampled at random) and seeds. Every trial is a plain JSON-able dict whose id is a hash of
what determines its result, so the same config always yields the same trials and an interrupted
sweep knows which are done. See docs/experiments.md for the format.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from rlsched.agents.models import ALGOS
from rlsched.envs import ENV_IDS
from rlsched.errors import ConfigError
from rlsched.train import TrainConfig

#: Bump when the meaning of a trial config changes: every trial id changes with it.
TRIAL_FORMAT = 1
#: Search dimensions: a mapping with exactly one of these keys.
GRID = "grid"
RANDOM_KINDS = ("choice", "uniform", "loguniform", "randint")
#: TrainConfig fields a sweep sets itself (per env entry and per trial).
RESERVED_TRAIN_KEYS = ("env_id", "dataset", "eval_dataset", "env_kwargs", "seed")
#: Default first test-episode seed: far from the seeds training (seed + rank), validation
#: (seed + 10_000) and imitation (seed + 20_000 ...) use.
DEFAULT_TEST_SEED = 1_000_000


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def config_hash(config: dict[str, Any]) -> str:
    """Stable short hash of a trial config (sorted-key JSON, SHA-256)."""
    return hashlib.sha256(_canonical(config).encode()).hexdigest()[:12]


def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", s).strip("._-") or "x"


def is_search_dim(value: Any) -> bool:
    """``{grid: [...]}``, ``{choice: [...]}``, ``{uniform: [lo, hi]}``, ``{loguniform: [lo,
    hi]}`` or ``{randint: [lo, hi]}`` (hi exclusive); anything else is a constant."""
    return (
        isinstance(value, dict) and len(value) == 1 and next(iter(value)) in (GRID, *RANDOM_KINDS)
    )


def _check_dim(name: str, value: dict[str, Any], where: str) -> None:
    kind, arg = next(iter(value.items()))
    if kind in (GRID, "choice"):
        if not isinstance(arg, list) or not arg:
            raise ConfigError(f"{where}: {name}: {kind} needs a non-empty list")
        return
    if not (
        isinstance(arg, list)
        and len(arg) == 2
        and all(isinstance(x, int | float) and not isinstance(x, bool) for x in arg)
        and arg[0] < arg[1]
    ):
        raise ConfigError(f"{where}: {name}: {kind} needs [low, high] with low < high")
    if kind == "loguniform" and arg[0] <= 0:
        raise ConfigError(f"{where}: {name}: loguniform needs low > 0")
    if kind == "randint" and not all(isinstance(x, int) for x in arg):
        raise ConfigError(f"{where}: {name}: randint needs integer bounds")


def sample_dim(value: dict[str, Any], rng: np.random.Generator) -> Any:
    """One draw of a random dimension (plain Python types, so the value hashes stably)."""
    kind, arg = next(iter(value.items()))
    if kind == "choice":
        return arg[int(rng.integers(len(arg)))]
    if kind == "uniform":
        return float(rng.uniform(arg[0], arg[1]))
    if kind == "loguniform":
        return float(math.exp(rng.uniform(math.log(arg[0]), math.log(arg[1]))))
    if kind == "randint":
        return int(rng.integers(arg[0], arg[1]))
    raise ConfigError(f"not a random dimension: {value}")


def _rng(*parts: Any) -> np.random.Generator:
    """A generator seeded from a stable hash of ``parts``: adding an algorithm or a dimension
    elsewhere in the config does not change the values drawn here."""
    digest = hashlib.sha256(_canonical(list(parts)).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


@dataclass
class EnvSpec:
    """One ``envs:`` entry: an env, its datasets and constructor arguments."""

    id: str
    dataset: str | None = None
    """Training dataset (learned policies); None: the env's default."""
    validation_dataset: str | None = None
    """Model selection during training (TrainConfig.eval_dataset); None: the training dataset
    with other seeds."""
    test_dataset: str | None = None
    """What every policy is evaluated on; None: ``dataset`` (else the env's default)."""
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    policies: list[str] | None = None
    """Replaces the top-level ``policies`` for this env."""
    algos: list[AlgoSpec] | None = None
    """Replaces the top-level ``algos`` for this env."""
    reference: str | None = None
    """The reference policy of the normalised score for this env (else the top-level one)."""

    @property
    def eval_dataset(self) -> str | None:
        return self.test_dataset or self.dataset


@dataclass
class AlgoSpec:
    """One ``algos:`` entry: a training algorithm, TrainConfig overrides and search dims."""

    algo: str
    label: str
    params: dict[str, Any] = field(default_factory=dict)

    def dims(self) -> tuple[dict[str, list[Any]], dict[str, dict[str, Any]]]:
        grid = {k: v[GRID] for k, v in self.params.items() if is_search_dim(v) and GRID in v}
        rand = {k: v for k, v in self.params.items() if is_search_dim(v) and GRID not in v}
        return grid, rand

    def points(self, num_samples: int, search_seed: int) -> list[dict[str, Any]]:
        """Hyperparameter points, with Ray Tune's meaning of ``num_samples``: for each sample,
        every grid combination (last dimension fastest), the random dimensions drawn afresh
        (seeded: the same config draws the same values). Without random dimensions: the grid
        once."""
        grid, rand = self.dims()
        combos: list[dict[str, Any]] = [{}]
        for k, values in grid.items():
            combos = [{**c, k: v} for c in combos for v in values]
        out = []
        for s in range(num_samples if rand else 1):
            for c in combos:
                drawn = {
                    k: sample_dim(d, _rng(search_seed, self.label, s, c, k))
                    for k, d in rand.items()
                }
                out.append({**c, **drawn})
        return out


@dataclass
class Trial:
    """One unit of work: evaluate a heuristic, or train an algorithm and evaluate the model."""

    id: str
    label: str
    config: dict[str, Any]
    """What determines the result (hashed into ``id``)."""

    @property
    def learned(self) -> bool:
        return "algo" in self.config

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "label": self.label, "config": self.config}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Trial:
        return cls(d["id"], d["label"], d["config"])


def make_trial(config: dict[str, Any], label: str) -> Trial:
    """A trial with its deterministic id ``<Env>-<label>-s<seed>-<hash>``."""
    h = config_hash(config)
    env = config["env"].split("/")[-1]
    name = f"{_slug(env)}-{_slug(label)[:40].rstrip('._-')}-s{config['seed']}-{h}"
    return Trial(name, label, config)


def _fmt_value(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def learned_label(label: str, hparams: dict[str, Any]) -> str:
    """``maskable_ppo`` or ``maskable_ppo[learning_rate=0.001,n_steps=64]``."""
    if not hparams:
        return label
    inner = ",".join(f"{k}={_fmt_value(v)}" for k, v in sorted(hparams.items()))
    return f"{label}[{inner}]"


@dataclass
class SweepConfig:
    """A parsed sweep file. ``trials()`` expands it; ``data`` is the mapping it came from."""

    name: str
    envs: list[EnvSpec]
    policies: list[str] = field(default_factory=list)
    algos: list[AlgoSpec] = field(default_factory=list)
    seeds: list[int] = field(default_factory=lambda: [0])
    episodes: int = 5
    test_seed: int = DEFAULT_TEST_SEED
    search: str = "grid"
    num_samples: int = 1
    search_seed: int = 0
    reference: str | None = None
    source: str = "sweep"
    data: dict[str, Any] = field(default_factory=dict)

    # ------------------------------------------------------------------ parsing
    @classmethod
    def from_yaml(cls, path: str | Path) -> SweepConfig:
        p = Path(path)
        try:
            data = yaml.safe_load(p.read_text())
        except (OSError, yaml.YAMLError) as e:
            raise ConfigError(f"{p}: cannot read sweep config: {' '.join(str(e).split())}") from e
        if not isinstance(data, dict):
            raise ConfigError(f"{p}: a sweep config must be a mapping")
        data.setdefault("name", p.stem)
        return cls.from_dict(data, source=str(p))

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "sweep") -> SweepConfig:
        known = {
            "name", "envs", "policies", "algos", "seeds", "episodes", "test_seed", "search",
            "num_samples", "search_seed", "reference", "description",
        }  # fmt: skip
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"{source}: unknown field(s) {', '.join(unknown)}")
        name = str(data.get("name") or "sweep")
        envs_raw = data.get("envs")
        if not isinstance(envs_raw, list) or not envs_raw:
            raise ConfigError(f"{source}: envs: a non-empty list of env entries is required")
        policies = _policy_list(data.get("policies", []), f"{source}: policies")
        algos = _algo_list(data.get("algos", []), f"{source}: algos")
        envs = [_env_spec(e, f"{source}: envs[{i}]") for i, e in enumerate(envs_raw)]
        seeds = data.get("seeds", [0])
        if isinstance(seeds, int) and not isinstance(seeds, bool):
            seeds = list(range(seeds))  # `seeds: 3` means 0, 1, 2
        if (
            not isinstance(seeds, list)
            or not seeds
            or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds)
            or len(set(seeds)) != len(seeds)
        ):
            raise ConfigError(f"{source}: seeds: a count or a list of distinct integers >= 0")
        search = data.get("search", "grid")
        if search not in ("grid", "random"):
            raise ConfigError(f"{source}: search must be 'grid' or 'random', not {search!r}")
        num_samples = _int(data.get("num_samples", 1), f"{source}: num_samples", 1)
        episodes = _int(data.get("episodes", 5), f"{source}: episodes", 1)
        test_seed = _int(data.get("test_seed", DEFAULT_TEST_SEED), f"{source}: test_seed", 0)
        search_seed = _int(data.get("search_seed", 0), f"{source}: search_seed", 0)
        for i, e in enumerate(envs):
            for a in e.algos if e.algos is not None else algos:
                _, rand = a.dims()
                if rand and search == "grid":
                    raise ConfigError(
                        f"{source}: algos {a.label!r} has random dimensions "
                        f"({', '.join(rand)}): set `search: random` and `num_samples`"
                    )
            if not (e.policies if e.policies is not None else policies) and not (
                e.algos if e.algos is not None else algos
            ):
                raise ConfigError(f"{source}: envs[{i}] ({e.id}): no policies and no algos")
        if search == "grid" and num_samples != 1:
            raise ConfigError(f"{source}: num_samples is for `search: random`")
        reference = data.get("reference")
        return cls(
            name=name,
            envs=envs,
            policies=policies,
            algos=algos,
            seeds=list(seeds),
            episodes=episodes,
            test_seed=test_seed,
            search=search,
            num_samples=num_samples,
            search_seed=search_seed,
            reference=str(reference) if reference is not None else None,
            source=source,
            data=data,
        )

    # ------------------------------------------------------------------ expansion
    def env_policies(self, env: EnvSpec) -> list[str]:
        return list(env.policies if env.policies is not None else self.policies)

    def env_algos(self, env: EnvSpec) -> list[AlgoSpec]:
        return list(env.algos if env.algos is not None else self.algos)

    def trials(self, policies: dict[int, list[str]] | None = None) -> list[Trial]:
        """Every trial, in a fixed order (env entry, policies, then algorithms and their
        hyperparameter points, seeds innermost). ``policies`` (env index -> names) replaces
        the policy lists, e.g. with ``all`` expanded for each env."""
        out: list[Trial] = []
        seen: set[str] = set()

        def add(t: Trial) -> None:
            if t.id not in seen:
                seen.add(t.id)
                out.append(t)

        for i, env in enumerate(self.envs):
            base = {
                "format": TRIAL_FORMAT,
                "env": env.id,
                "env_kwargs": env.env_kwargs,
                "test_dataset": env.eval_dataset,
                "episodes": self.episodes,
                "test_seed": self.test_seed,
            }
            names = policies[i] if policies is not None and i in policies else None
            for name in names if names is not None else self.env_policies(env):
                for s in self.seeds:
                    add(make_trial({**base, "policy": name, "seed": s}, name))
            for algo in self.env_algos(env):
                for point in algo.points(self.num_samples, self.search_seed):
                    consts = {k: v for k, v in algo.params.items() if not is_search_dim(v)}
                    train = {**consts, **point}
                    label = learned_label(algo.label, point)
                    for s in self.seeds:
                        cfg = {
                            **base,
                            "algo": algo.algo,
                            "dataset": env.dataset,
                            "validation_dataset": env.validation_dataset,
                            "train": train,
                            "hparams": point,
                            "seed": s,
                        }
                        add(make_trial(cfg, label))
        for t in out:
            if "algo" in t.config:
                train_config(t.config, where=f"{self.source}: trial {t.id}")
        return out

    def references(self) -> dict[str, str]:
        """Env id -> reference policy named in the config (env entry first)."""
        out: dict[str, str] = {}
        for e in self.envs:
            ref = e.reference or self.reference
            if ref and e.id not in out:
                out[e.id] = ref
        return out

    def to_dict(self) -> dict[str, Any]:
        return dict(self.data)


def train_config(config: dict[str, Any], where: str = "trial") -> Any:
    """The TrainConfig a learned trial trains with (validated)."""
    fields = {
        **config["train"],
        "env_id": config["env"],
        "dataset": config.get("dataset"),
        "eval_dataset": config.get("validation_dataset"),
        "env_kwargs": dict(config["env_kwargs"]),
        "algo": config["algo"],
        "seed": config["seed"],
    }
    try:
        return TrainConfig.from_dict(fields, source=where)
    except TypeError as e:  # a field of the wrong shape
        raise ConfigError(f"{where}: {e}") from e


def _int(v: Any, where: str, low: int) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or v < low:
        raise ConfigError(f"{where} must be an integer >= {low}")
    return v


def _policy_list(v: Any, where: str) -> list[str]:
    if isinstance(v, str):
        v = [x.strip() for x in v.split(",") if x.strip()]
    if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
        raise ConfigError(f"{where}: a list of policy names (heuristics, learned:PATH, all)")
    return list(v)


def _algo_list(v: Any, where: str) -> list[AlgoSpec]:
    if not isinstance(v, list):
        raise ConfigError(f"{where}: a list of {{algo: NAME, ...TrainConfig fields}}")
    names = {f.name for f in dataclasses.fields(TrainConfig)}
    out = []
    labels: set[str] = set()
    for i, a in enumerate(v):
        w = f"{where}[{i}]"
        if isinstance(a, str):
            a = {"algo": a}
        if not isinstance(a, dict) or "algo" not in a:
            raise ConfigError(f"{w}: a mapping with `algo:` ({', '.join(ALGOS)})")
        a = dict(a)
        algo = a.pop("algo")
        if algo not in ALGOS:
            raise ConfigError(f"{w}: algo {algo!r} is not one of {', '.join(ALGOS)}")
        label = str(a.pop("label", algo))
        if label in labels:
            raise ConfigError(f"{w}: label {label!r} is used twice; give each entry a label")
        labels.add(label)
        for k, val in a.items():
            if k in RESERVED_TRAIN_KEYS:
                raise ConfigError(f"{w}: {k} is set by the sweep (env entry, seeds), not here")
            if k not in names:
                raise ConfigError(f"{w}: unknown TrainConfig field {k!r}")
            if is_search_dim(val):
                _check_dim(k, val, w)
        out.append(AlgoSpec(algo, label, a))
    return out


def _env_spec(e: Any, where: str) -> EnvSpec:
    if isinstance(e, str):
        e = {"id": e}
    if not isinstance(e, dict) or "id" not in e:
        raise ConfigError(f"{where}: a mapping with `id:` (an env id)")
    known = {
        "id", "dataset", "validation_dataset", "test_dataset", "env_kwargs", "policies",
        "algos", "reference",
    }  # fmt: skip
    unknown = sorted(set(e) - known)
    if unknown:
        raise ConfigError(f"{where}: unknown field(s) {', '.join(unknown)}")
    env_id = str(e["id"])
    if env_id not in ENV_IDS and f"rlsched/{env_id}" in ENV_IDS:
        env_id = f"rlsched/{env_id}"
    if env_id not in ENV_IDS:
        raise ConfigError(f"{where}: unknown env {env_id!r}; known: {', '.join(ENV_IDS)}")
    kwargs = e.get("env_kwargs") or {}
    if not isinstance(kwargs, dict):
        raise ConfigError(f"{where}: env_kwargs must be a mapping")
    if "dataset" in kwargs:
        raise ConfigError(f"{where}: give the dataset as `dataset:`, not in env_kwargs")
    for k in ("dataset", "validation_dataset", "test_dataset", "reference"):
        if e.get(k) is not None and not isinstance(e[k], str):
            raise ConfigError(f"{where}: {k} must be a string")
    return EnvSpec(
        id=env_id,
        dataset=e.get("dataset"),
        validation_dataset=e.get("validation_dataset"),
        test_dataset=e.get("test_dataset"),
        env_kwargs=dict(kwargs),
        policies=_policy_list(e["policies"], f"{where}: policies") if "policies" in e else None,
        algos=_algo_list(e["algos"], f"{where}: algos") if "algos" in e else None,
        reference=e.get("reference"),
    )


def load_sweep(path: str | Path) -> SweepConfig:
    return SweepConfig.from_yaml(path)
