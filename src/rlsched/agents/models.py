"""Saved models: the algorithms by name, the self-describing model folder, loading.

A model folder describes itself (as SB3 save files do): ``model.zip`` (the SB3 model),
``vecnormalize.pkl`` (observation normalisation statistics, if used; written by
``VecNormalize.save``) and ``meta.json`` (format, algorithm, env id and arguments, library
versions). Both :mod:`rlsched.policies.learned` (acting) and :mod:`rlsched.train` (saving)
use this module, so it lives below both.
"""

from __future__ import annotations

import importlib
import json
import pickle
import sys
import zipfile
from pathlib import Path
from typing import Any

from sb3_contrib import MaskablePPO
from stable_baselines3 import DQN, PPO
from stable_baselines3.common.save_util import json_to_data
from stable_baselines3.common.vec_env import VecNormalize

from rlsched.agents.masked_dqn import MaskedDQN
from rlsched.errors import PolicyError
from rlsched.zoo import resolve_model_dir

MODEL_FORMAT = "rlsched-model/1"

ALGOS = ("maskable_ppo", "ppo", "dqn", "masked_dqn")
#: Algorithms whose ``predict`` takes ``action_masks=`` and never returns a masked action.
MASKED_ALGOS = ("maskable_ppo", "masked_dqn")

_ALGO_CLASSES: dict[str, Any] = {
    "maskable_ppo": MaskablePPO,
    "ppo": PPO,
    "dqn": DQN,
    "masked_dqn": MaskedDQN,
}

#: Modules that saved models name (SB3 pickles the policy's classes by module path) and where
#: they are now: models saved before the move keep loading, the shipped zoo model among them.
LEGACY_MODULES = {
    "rlsched.train.networks": "rlsched.agents.networks",
    "rlsched.train.masked_dqn": "rlsched.agents.masked_dqn",
}


def algo_class(algo: str) -> Any:
    """The SB3 class of an algorithm name (one of :data:`ALGOS`)."""
    try:
        return _ALGO_CLASSES[algo]
    except KeyError:
        raise PolicyError(f"unknown algorithm {algo!r}; choose one of {', '.join(ALGOS)}") from None


def _alias_legacy_modules() -> None:
    for old, new in LEGACY_MODULES.items():
        if old not in sys.modules:
            sys.modules[old] = importlib.import_module(new)


def load_model(algo: str, path: str | Path, acting: bool = False) -> Any:
    """``algo_class(algo).load(path)`` on the CPU; models saved under the old module paths
    (:data:`LEGACY_MODULES`) load too.

    ``acting=True`` (a policy that only acts: :class:`~rlsched.policies.learned.LearnedPolicy`)
    loads the same weights without what only training needs: the optimizer, whose saved state
    is kept but which steps nothing (:class:`ActingOnly`; torch's first optimizer in a process
    imports ``torch._dynamo``, about a second), and the actor-critic policies' orthogonal
    initialisation, which the saved weights overwrite (QR decompositions of every layer: most
    of a load for the wider networks)."""
    _alias_legacy_modules()
    if not acting:
        return algo_class(algo).load(path, device="cpu")
    with zipfile.ZipFile(path) as zf:
        data = json_to_data(zf.read("data").decode())
    kwargs = {**data.get("policy_kwargs", {}), "optimizer_class": ActingOnly}
    if algo in ("ppo", "maskable_ppo"):  # ActorCriticPolicy's flag
        kwargs["ortho_init"] = False
    return algo_class(algo).load(path, device="cpu", custom_objects={"policy_kwargs": kwargs})


class ActingOnly:
    """The optimizer of a model loaded to act (``load_model(..., acting=True)``): it holds the
    saved optimizer state, to hand it back, and refuses to step."""

    def __init__(self, params: Any, lr: float = 0.0, **kwargs: Any) -> None:
        self.param_groups = [{"params": list(params), "lr": lr, **kwargs}]
        self._state: dict[str, Any] = {}

    def load_state_dict(self, state: dict[str, Any], strict: bool = True) -> None:
        self._state = state

    def state_dict(self) -> dict[str, Any]:
        return self._state

    def zero_grad(self, set_to_none: bool = True) -> None:
        raise PolicyError("this model was loaded to act (load_model(acting=True)), not to train")

    step = zero_grad


def load_normalizer(path: str | Path) -> VecNormalize:
    """The observation statistics that ``VecNormalize.save`` wrote, without an env to wrap
    (``VecNormalize.load`` needs one: it is this unpickling plus ``set_venv``)."""
    with Path(path).open("rb") as fh:
        normalizer = pickle.load(fh)
    if not isinstance(normalizer, VecNormalize):
        raise PolicyError(f"{path}: not a VecNormalize save ({type(normalizer).__name__})")
    return normalizer


def read_meta(path: str | Path) -> dict[str, Any]:
    d = resolve_model_dir(path)
    meta = json.loads((d / "meta.json").read_text())
    if meta.get("format") != MODEL_FORMAT:
        raise PolicyError(f"{d}/meta.json: format {meta.get('format')!r}, expected {MODEL_FORMAT}")
    return dict(meta)
