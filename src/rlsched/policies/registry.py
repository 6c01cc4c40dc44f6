"""Policies by name: the heuristics, and ``learned:PATH`` for a trained model."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, Literal

from gymnasium import spaces

from rlsched.envs import ENV_IDS
from rlsched.envs.args import env_class
from rlsched.errors import PolicyError
from rlsched.policies import llm, offloading, pods, vm
from rlsched.policies.base import Policy
from rlsched.policies.heuristics import HEURISTICS, applicable, make_heuristic, sample_view, view_of
from rlsched.policies.learned import LearnedPolicy
from rlsched.policies.oracle import DEFAULT_TOP_K, ClairvoyantPolicy
from rlsched.suggest import did_you_mean

#: Each env's own policies (``name -> factory(env, seed) -> Policy``), by env id.
ENV_POLICY_FACTORIES: dict[str, Mapping[str, Callable[..., Policy]]] = {
    "rlsched/WorkflowOffloading-v0": offloading.POLICY_FACTORIES,
    "rlsched/VMPlacement-v0": vm.POLICY_FACTORIES,
    "rlsched/PodRebalancing-v0": pods.POLICY_FACTORIES,
    "rlsched/LLMAutoscaling-v0": llm.POLICY_FACTORIES,
}


def env_id_of(env: Any) -> str | None:
    """The registered id of ``env`` (its spec's, else the one whose class it is)."""
    spec = getattr(env, "spec", None) or getattr(getattr(env, "unwrapped", env), "spec", None)
    if spec is not None and spec.id in ENV_IDS:
        return str(spec.id)
    cls = type(getattr(env, "unwrapped", env))
    return next((i for i in ENV_IDS if env_class(i) is cls), None)


def make_policy(spec: str, env: Any, seed: int | None = None) -> Policy:
    """Build the policy ``spec`` (a heuristic name, ``learned:PATH``, or ``clairvoyant`` /
    ``clairvoyant:BASE``: the oracle over the env's default or the named base heuristic)."""
    if spec == "clairvoyant" or spec.startswith("clairvoyant:"):
        base_env = getattr(env, "unwrapped", env)
        base = spec.split(":", 1)[1] if ":" in spec else getattr(base_env, "oracle_base", None)
        if not base:
            raise PolicyError(f"{type(base_env).__name__} names no base heuristic for clairvoyant")
        if base.startswith(("clairvoyant", "learned:")):
            raise PolicyError(f"clairvoyant needs a heuristic as its base, not {base!r}")
        return make_clairvoyant(env, base, seed=seed)
    if spec.startswith("learned:"):
        pol = LearnedPolicy(spec.split(":", 1)[1])
        pol.check_env(getattr(env, "unwrapped", env))
        return pol
    factories = env_policy_factories(env)
    if spec in factories:
        return factories[spec](getattr(env, "unwrapped", env), seed)
    if spec not in HEURISTICS:
        known = [*factories, *HEURISTICS]
        raise PolicyError(
            f"unknown policy {spec!r}{did_you_mean(spec, known)}; "
            f"known: {', '.join(known)}, clairvoyant or learned:PATH"
        )
    if not _discrete(env):
        raise PolicyError(f"policy {spec!r} picks one action index; this env's actions are not")
    # decided on a zero observation of the space: building a policy never touches env state
    if not applicable(spec, sample_view(env)):
        raise PolicyError(f"policy {spec!r} does not apply to this env")
    return make_heuristic(spec, view_of(env), seed=seed)


def env_policy_factories(env: Any) -> dict[str, Any]:
    """The policies made for ``env``'s id (:data:`ENV_POLICY_FACTORIES`), by name."""
    return dict(ENV_POLICY_FACTORIES.get(env_id_of(env) or "", {}))


def _discrete(env: Any) -> bool:
    """The generic heuristics return one action index: they apply to Discrete action spaces."""
    space = getattr(env, "action_space", None)
    return space is None or isinstance(space, spaces.Discrete)


def applicable_heuristics(env: Any) -> list[str]:
    """Every heuristic that can act in ``env`` (what ``--policies all`` expands to): the env's
    own policies first, then the generic ones that apply (only to Discrete action spaces)."""
    own = list(env_policy_factories(env))
    if not _discrete(env):
        return own
    view = sample_view(env)
    return own + [name for name in HEURISTICS if name not in own and applicable(name, view)]


def expand_policies(specs: str, env: Any) -> list[str]:
    """Split a comma-separated list; ``all`` expands to every applicable heuristic."""
    out: list[str] = []
    for s in (x.strip() for x in specs.split(",")):
        if not s:
            continue
        if s == "all":
            out.extend(n for n in applicable_heuristics(env) if n not in out)
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
    node_envs = ", ".join(short(e) for e, c in classes.items() if hasattr(c, "node_view"))
    rows = [(name, node_envs, rule(cls)) for name, (cls, _) in HEURISTICS.items()]
    for env_id in classes:
        for name, factory in ENV_POLICY_FACTORIES.get(env_id, {}).items():
            rows.append((name, short(env_id), rule(factory)))
    rows.append(
        ("learned:PATH", "any", "a model trained by `rlsched train` (model or run folder)")
    )
    return rows


def make_clairvoyant(
    env: Any,
    base_name: str,
    seed: int | None = None,
    horizon: int | Literal["env"] | None = "env",
    top_k: int | None = None,
) -> ClairvoyantPolicy:
    """The oracle over base heuristic ``base_name``; ``horizon="env"`` takes the env's
    ``oracle_horizon`` (None: to the episode's end), ``top_k`` the env's ``oracle_top_k``."""
    base_env = getattr(env, "unwrapped", env)
    base = make_policy(base_name, env, seed=seed)
    h: int | None = getattr(base_env, "oracle_horizon", None) if horizon == "env" else horizon
    k = top_k if top_k is not None else getattr(base_env, "oracle_top_k", DEFAULT_TOP_K)
    return ClairvoyantPolicy(base_env, base, base_name, seed, h, k)
