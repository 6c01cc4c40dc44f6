"""Policies by name: the generic heuristics, each env's own policies (registered here by env
id, :data:`ENV_POLICIES`), ``clairvoyant`` and ``learned:PATH`` for a trained model."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Mapping
from typing import Any, Literal

import yaml
from gymnasium import spaces

from rlsched.envs import ENV_IDS
from rlsched.envs.args import env_class
from rlsched.envs.base import RlschedEnv
from rlsched.errors import PolicyError
from rlsched.policies import gang, llm, offloading, pods, vm
from rlsched.policies.base import Policy
from rlsched.policies.departures import DeparturePolicy
from rlsched.policies.heuristics import HEURISTICS, applicable, make_heuristic, sample_view, view_of
from rlsched.policies.learned import LearnedPolicy, read_meta, resolve_model_dir
from rlsched.policies.oracle import DEFAULT_TOP_K, ClairvoyantPolicy
from rlsched.policies.residual import FULL_RANGE, ResidualPolicy
from rlsched.policies.rollout import RolloutPolicy
from rlsched.policies.trial import TrialGuard, trial_settings
from rlsched.suggest import did_you_mean

#: Each env's own policies (``name -> factory(env, seed) -> Policy``), by env id.
ENV_POLICIES: dict[str, Mapping[str, Callable[..., Policy]]] = {
    "rlsched/WorkflowOffloading-v0": offloading.POLICY_FACTORIES,
    "rlsched/VMPlacement-v0": vm.POLICY_FACTORIES,
    "rlsched/PodRebalancing-v0": pods.POLICY_FACTORIES,
    "rlsched/LLMAutoscaling-v0": llm.POLICY_FACTORIES,
    "rlsched/KubeScheduling-v0": gang.POLICY_FACTORIES,
}


def env_id_of(env: Any) -> str | None:
    """The registered id of ``env`` (an env, wrapped or not, or an env class); None for an env
    this package does not register."""
    cls = env if isinstance(env, type) else type(env.unwrapped)
    for env_id in ENV_IDS:
        if issubclass(cls, env_class(env_id)):
            return env_id
    return None


def split_arguments(spec: str) -> tuple[str, dict[str, Any]]:
    """``NAME?key=value&key=value`` -> (``NAME``, its arguments; values read as YAML scalars:
    ``16`` an int, ``2.5`` a float, ``true`` a bool). A spec without ``?`` has none."""
    name, sep, query = spec.partition("?")
    if not sep:
        return spec, {}
    kwargs: dict[str, Any] = {}
    for part in query.split("&"):
        key, eq, raw = part.partition("=")
        if not (eq and key.strip() and raw.strip()):
            raise PolicyError(
                f"policy {spec!r}: arguments are key=value joined by '&', got {part!r}"
            )
        value = yaml.safe_load(raw)
        if isinstance(value, (dict, list)) or value is None:
            raise PolicyError(f"policy {spec!r}: {key} must be a number, a bool or a word")
        kwargs[key.strip()] = value
    return name, kwargs


def _with_arguments(spec: str, env: Any, seed: int | None) -> Policy:
    """An env's own policy built with the arguments its spec names (``hpa_threshold?
    switch_window=16``); the policy's ``name`` is the whole spec, as tables show it."""
    name, kwargs = split_arguments(spec)
    factories = env_policy_factories(env)
    if name not in factories:
        known = list(factories)
        raise PolicyError(
            f"policy {spec!r}: only an env's own policies take arguments "
            f"({', '.join(known) or 'none here'}){did_you_mean(name, known)}"
        )
    factory = factories[name]
    hidden = ("self", "env", "seed", "config", "settings")  # objects, not words or numbers
    params = [p for p in inspect.signature(factory).parameters if p not in hidden]
    # a policy with a config dataclass (``config_type``) takes its fields as settings
    config_type = getattr(factory, "config_type", None)
    fields = [f.name for f in dataclasses.fields(config_type)] if config_type else []
    settings = {k: kwargs.pop(k) for k in list(kwargs) if k in fields and k not in params}
    unknown = sorted(set(kwargs) - set(params))
    if unknown:
        takes = params + fields
        raise PolicyError(
            f"policy {spec!r}: {name} takes {takes or 'no arguments'}, not {unknown}"
        )
    if settings:
        kwargs["settings"] = settings
    pol = factory(env.unwrapped, seed, **kwargs)
    pol.name = spec
    return pol


def make_policy(spec: str, env: Any, seed: int | None = None) -> Policy:
    """Build the policy ``spec`` (a heuristic name, ``NAME?key=value&...`` for an env's own
    policy with arguments, ``learned:PATH`` (``?anchor=H&margin=M``: the margin gate of
    :class:`~rlsched.policies.learned.LearnedPolicy`; ``?trial=H`` or ``?trial=off``: the
    trial guard of :mod:`rlsched.policies.trial`), ``clairvoyant`` /
    ``clairvoyant:BASE``: the oracle over the env's default or the named base heuristic (its
    spec may set :data:`ORACLE_OPTIONS`: ``clairvoyant:hpa?horizon=30&score=return``), or
    ``rollout`` / ``rollout:BASE``: the search over sampled futures, whose budget its spec may
    set: ``rollout:peft?top_k=2&horizon=end&futures=0``, :data:`ROLLOUT_OPTIONS`)."""
    if spec == "clairvoyant" or spec.startswith("clairvoyant:"):
        base_env: RlschedEnv = env.unwrapped
        base = spec.split(":", 1)[1] if ":" in spec else base_env.oracle_base
        if not base:
            raise PolicyError(f"{type(base_env).__name__} names no base heuristic for clairvoyant")
        if base.startswith(("clairvoyant", "rollout")):
            # a learned base is allowed: the oracle then values each action by the model's
            # continuation (policy iteration's labels), not a heuristic's headroom
            raise PolicyError(
                f"clairvoyant needs a heuristic or learned:PATH as its base, not {base!r}"
            )
        base, options = rollout_options(spec, base)
        other = sorted(set(options) - set(ORACLE_OPTIONS))
        if other:
            raise PolicyError(f"policy {spec!r}: the oracle takes {', '.join(ORACLE_OPTIONS)} "
                              f"of the search's arguments, not {', '.join(other)}")  # fmt: skip
        try:
            oracle = make_clairvoyant(env, base, seed=seed, **options)
        except ValueError as e:  # settings that do not go together: named with the spec
            raise PolicyError(f"policy {spec!r}: {e}") from e
        if options:
            oracle.name = spec
        return oracle
    if spec == "rollout" or spec.startswith(("rollout:", "rollout?")):
        base_env = env.unwrapped
        if spec.startswith("rollout:"):
            base = spec.split(":", 1)[1]
        else:  # the env's own base, perhaps with the search's arguments
            base = (base_env.oracle_base or "") + spec[len("rollout") :]
        if not base or base.startswith("?"):
            raise PolicyError(f"{type(base_env).__name__} names no base heuristic for rollout")
        if base.startswith(("clairvoyant", "rollout")):
            raise PolicyError(
                f"rollout needs a heuristic or learned:PATH as its base, not {base!r}"
            )
        base, options = rollout_options(spec, base)
        pol = make_rollout(env, base, seed=seed, **options)
        if options:
            pol.name = spec
        return pol
    if spec.startswith("learned:"):
        path, kwargs = split_arguments(spec.split(":", 1)[1])
        trial = {k: kwargs.pop(k) for k in list(kwargs) if k in TRIAL_ARGS}
        if read_meta(resolve_model_dir(path)).get("algo") == "departures":
            dep = _departures(spec, path, kwargs, env)
            return _guarded(spec, dep, dep.meta, trial, env, seed, "familiar" in kwargs)
        unknown = sorted(set(kwargs) - {"anchor", "margin"})
        if unknown:
            raise PolicyError(
                f"policy {spec!r}: learned:PATH takes anchor, margin, "
                f"{', '.join(TRIAL_ARGS)}, not {unknown}"
            )
        pol = LearnedPolicy(path, **kwargs)
        if kwargs:  # trial arguments name the guarded policy (_guarded)
            pol.name = spec
        pol.check_env(env.unwrapped)
        res = pol.meta.get("residual")
        if res and pol.margin is not None:
            raise PolicyError(
                f"policy {spec!r}: a residual model's action is not gated by a margin"
            )
        if not res:
            return _guarded(spec, pol, pol.meta, trial, env, seed)
        # trained as a correction to a heuristic: it acts over that heuristic here too (and a
        # trial guard tries the two together)
        heuristic = make_policy(str(res["policy"]), env, seed=seed)
        bounds = tuple(res.get("range") or FULL_RANGE)
        residual = ResidualPolicy(
            pol, heuristic, float(res["scale"]), env.unwrapped, bounds,
            res.get("hold", 1), res.get("gate"),
        )  # fmt: skip
        return _guarded(spec, residual, pol.meta, trial, env, seed)
    if "?" in spec:
        return _with_arguments(spec, env, seed)
    factories = env_policy_factories(env)
    if spec in factories:
        return factories[spec](env.unwrapped, seed)
    if spec not in HEURISTICS:
        known = [*factories, *HEURISTICS]
        raise PolicyError(
            f"unknown policy {spec!r}{did_you_mean(spec, known)}; "
            f"known: {', '.join(known)}, clairvoyant, rollout or learned:PATH"
        )
    if not _discrete(env):
        raise PolicyError(f"policy {spec!r} picks one action index; this env's actions are not")
    # decided on a zero observation of the space: building a policy never touches env state
    if not applicable(spec, sample_view(env)):
        raise PolicyError(f"policy {spec!r} does not apply to this env")
    return make_heuristic(spec, view_of(env), seed=seed)


#: ``learned:PATH`` arguments of the trial guard (:mod:`rlsched.policies.trial`)
TRIAL_ARGS = (
    "trial", "trial_futures", "trial_horizon", "trial_every", "trial_significance",
    "trial_thresholds", "trial_metric", "trial_keep", "trial_sampler", "trial_familiar",
    "trial_commit",
)


def _trial_of(
    spec: str, shipped: dict[str, Any] | None, given: dict[str, Any]
) -> dict[str, Any] | None:
    """The trial guard's settings for ``learned:PATH``: the model's ``meta.json`` ``trial``
    (``shipped``) overridden by the spec's ``trial=ANCHOR|off`` and ``trial_KEY=V``; None for
    no guard."""
    if given.get("trial") == "off" or given.get("trial") is False:
        if len(given) > 1:
            raise PolicyError(f"policy {spec!r}: trial=off takes no other trial_ arguments")
        return None
    if not shipped and "trial" not in given:
        if given:
            raise PolicyError(
                f"policy {spec!r}: trial_ arguments need a trial guard: trial=ANCHOR names one"
            )
        return None
    raw = dict(shipped or {})
    if "trial" in given:
        raw["anchor"] = str(given["trial"])
    raw.update({k[len("trial_") :]: v for k, v in given.items() if k != "trial"})
    return trial_settings(raw, f"policy {spec!r}")


def _guarded(
    spec: str, pol: Policy, meta: dict[str, Any], trial: dict[str, Any], env: Any,
    seed: int | None, familiar_given: bool = False,
) -> Policy:
    """``pol`` (a learned model as it plays: a residual one over its heuristic) under the
    trial guard its ``meta`` and ``trial`` arguments name, or ``pol``; a spec with ``trial``
    arguments names the policy. The trial's ``familiar`` sets a departure model's familiarity
    guard unless the spec set it (``familiar_given``)."""
    if trial:
        pol.name = spec
    settings = _trial_of(spec, meta.get("trial"), trial)
    if settings is None:
        return pol
    thresholds, familiar = settings.pop("thresholds"), settings.pop("familiar")
    if (thresholds or familiar) and not isinstance(pol, DeparturePolicy):
        what = "thresholds" if thresholds else "familiar"
        raise PolicyError(f"policy {spec!r}: trial {what} applies to a departure model only")
    if familiar and not familiar_given:
        assert isinstance(pol, DeparturePolicy)
        pol = pol.with_familiar(familiar)
    variants = [pol.at_threshold(t) for t in thresholds] if isinstance(pol, DeparturePolicy) else []
    anchor = make_policy(settings.pop("anchor"), env, seed=seed)
    return TrialGuard(env, pol, anchor, anchor.name, seed=seed, variants=variants, **settings)


def _departures(spec: str, path: str, kwargs: dict[str, str], env: Any) -> DeparturePolicy:
    """``learned:PATH`` of a departure model (:mod:`rlsched.policies.departures`)."""
    unknown = sorted(set(kwargs) - {"threshold", "familiar"})
    if unknown:
        raise PolicyError(
            f"policy {spec!r}: a departure model takes threshold, familiar and "
            f"{', '.join(TRIAL_ARGS)}, not {unknown}"
        )
    pol = DeparturePolicy(path, kwargs.get("threshold"), kwargs.get("familiar"))
    if kwargs:
        pol.name = spec
    pol.check_env(env.unwrapped)
    return pol


def policies_of(env_id: str | None) -> dict[str, Callable[..., Policy]]:
    """The policies registered for ``env_id`` (:data:`ENV_POLICIES`), by name."""
    return dict(ENV_POLICIES.get(env_id or "", {}))


def env_policy_factories(env: Any) -> dict[str, Callable[..., Policy]]:
    """Policies made for ``env`` (wrapped or not, or an env class), by name."""
    return policies_of(env_id_of(env))


def _discrete(env: Any) -> bool:
    """The generic heuristics return one action index: they apply to Discrete action spaces."""
    space = getattr(env, "action_space", None)
    return space is None or isinstance(space, spaces.Discrete)


def applicable_heuristics(env: Any) -> list[str]:
    """Every heuristic that can act in ``env`` (what ``--policies all`` expands to): the env's
    own policies first, then the generic ones that apply (only to Discrete action spaces)."""
    inst = getattr(env, "unwrapped", env)
    own = [n for n in env_policy_factories(env)
           if isinstance(inst, type) or inst.policy_applies(n)]  # fmt: skip
    if not _discrete(env):
        return own
    view = sample_view(env)
    return own + [name for name in HEURISTICS if name not in own and applicable(name, view)]


def plain_heuristics(env: Any) -> list[str]:
    """The applicable heuristics that do not search (``optimal``, ``mdp_rollout``: seconds to
    minutes per decision, never a verdict's reference): what zoo and transfer verdicts are
    measured against."""
    return [
        n for n in applicable_heuristics(env)
        if getattr(make_policy(n, env, seed=0), "category", "heuristic") == "heuristic"
    ]  # fmt: skip


def expand_policies(specs: str, env: Any) -> list[str]:
    """Split a comma-separated list; ``all`` expands to every applicable heuristic, ``plain``
    to those that do not search (:func:`plain_heuristics`)."""
    out: list[str] = []
    for s in (x.strip() for x in specs.split(",")):
        if not s:
            continue
        if s in ("all", "plain"):
            found = applicable_heuristics(env) if s == "all" else plain_heuristics(env)
            out.extend(n for n in found if n not in out)
        elif s not in out:
            out.append(s)
    if not out:
        raise PolicyError("no policies given")
    return out


def policy_catalogue() -> list[tuple[str, str, str]]:
    """``(name, envs, rule)`` for every policy name: the generic heuristics (envs with a node
    view), each env's own policies, and ``learned:PATH``; ``rule`` is the whole first
    paragraph of the policy's docstring."""

    def rule(obj: Any) -> str:
        doc = inspect.getdoc(obj) or ""
        return " ".join(doc.split("\n\n")[0].split())

    def short(env_id: str) -> str:
        return env_id.removeprefix("rlsched/")

    classes = {env_id: env_class(env_id) for env_id in ENV_IDS}
    node_envs = ", ".join(short(e) for e, c in classes.items() if c.has_node_view())
    rows = [(name, node_envs, rule(cls)) for name, (cls, _) in HEURISTICS.items()]
    for env_id in ENV_IDS:
        for name, factory in policies_of(env_id).items():
            rows.append((name, short(env_id), rule(factory)))
    rows.append(("learned:PATH", "any", "a model trained by `rlsched train` (model or run folder)"))
    return rows


def make_clairvoyant(
    env: Any,
    base_name: str,
    seed: int | None = None,
    horizon: int | Literal["env"] | None = "env",
    top_k: int | None = None,
    score: Literal["metric", "return"] = "metric",
) -> ClairvoyantPolicy:
    """The oracle over base heuristic ``base_name``; ``horizon="env"`` takes the env's
    ``oracle_horizon`` (None: to the episode's end), ``top_k`` the env's ``oracle_top_k``; it
    searches at the env's ``oracle_decisions`` decisions per episode (None: at every one).
    ``score``: by the main metric, or by the rollouts' summed reward (``"return"``)."""
    base_env: RlschedEnv = env.unwrapped
    base = make_policy(base_name, env, seed=seed)
    h: int | None = base_env.oracle_horizon if horizon == "env" else horizon
    k = top_k if top_k is not None else (base_env.oracle_top_k or DEFAULT_TOP_K)
    d = base_env.oracle_decisions if h is None else None
    return ClairvoyantPolicy(base_env, base, base_name, seed, h, k, decisions=d, score=score)


#: The search's arguments the oracle takes in its spec (``clairvoyant:hpa?horizon=30&score=
#: return``); the rest of :data:`ROLLOUT_OPTIONS` are about sampled futures it does not draw
ORACLE_OPTIONS = ("horizon", "top_k", "score")


#: The search's own arguments in ``rollout:BASE?key=value``: its decision budget (candidates,
#: sampled futures, horizon: a number of decisions, or ``end``) and how it scores; any other
#: key is the base's (``rollout:hpa_threshold?switch_window=16``).
ROLLOUT_OPTIONS: dict[str, tuple[type, ...]] = {
    "horizon": (int, str),
    "futures": (int,),
    "top_k": (int,),
    "prefer_base": (bool,),
    "score": (str,),
    "reward": (str,),
    "min_gain": (int, float),
    "significance": (int, float),
    "ranked": (bool,),
    "compiled": (bool,),
}


def rollout_options(spec: str, base: str) -> tuple[str, dict[str, Any]]:
    """Split ``BASE?key=value&...`` of a ``rollout:`` spec into the base's own spec and the
    search's arguments (:data:`ROLLOUT_OPTIONS`), checked so that a typo names the spec."""
    name, sep, query = base.partition("?")
    if not sep:
        return base, {}
    own = [p for p in query.split("&") if p.partition("=")[0].strip() in ROLLOUT_OPTIONS]
    rest = [p for p in query.split("&") if p not in own]
    _, options = split_arguments("rollout?" + "&".join(own)) if own else ("", {})
    for key, value in options.items():
        kinds = ROLLOUT_OPTIONS[key]
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            raise PolicyError(
                f"policy {spec!r}: {key} must be {' or '.join(k.__name__ for k in kinds)}, "
                f"not {value!r}"
            )
    if "horizon" in options and isinstance(options["horizon"], str):
        if options["horizon"] != "end":
            raise PolicyError(
                f"policy {spec!r}: horizon is a number of decisions or 'end', "
                f"not {options['horizon']!r}"
            )
        options["horizon"] = None
    if options.get("score", "metric") not in ("metric", "return"):
        raise PolicyError(
            f"policy {spec!r}: score is 'metric' or 'return', not {options['score']!r}"
        )
    for key in ("top_k", "horizon"):
        if isinstance(options.get(key), int) and options[key] < 1:
            raise PolicyError(f"policy {spec!r}: {key} must be at least 1, not {options[key]}")
    if min(options.get(k, 0) for k in ("futures", "min_gain", "significance")) < 0:
        raise PolicyError(f"policy {spec!r}: futures, min_gain and significance must be at least 0")
    return name + ("?" + "&".join(rest) if rest else ""), options


def make_rollout(env: Any, base_name: str, seed: int | None = None, **options: Any) -> Policy:
    """The rollout policy over sampled futures (:class:`RolloutPolicy`) with base heuristic
    ``base_name``; the env's ``rollout_options`` (horizon, futures, top_k), then ``options``,
    override the policy's defaults."""
    base_env: RlschedEnv = env.unwrapped
    if not type(base_env).can_resample_future():
        raise PolicyError(f"{type(base_env).__name__} cannot sample futures: no rollout policy")
    base = make_policy(base_name, env, seed=seed)
    return RolloutPolicy(base_env, base, base_name, seed, **{**base_env.rollout_options, **options})
