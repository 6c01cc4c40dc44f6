"""Shared sweep test helpers: tiny configs that run in seconds."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CI_SWEEP = ROOT / "configs" / "sweeps" / "ci.yaml"

TINY_TRAIN = {
    "total_steps": 256,
    "n_envs": 1,
    "n_steps": 64,
    "batch_size": 64,
    "n_epochs": 2,
    "eval_freq": 0,
    "tensorboard": False,
}

BASE: dict[str, Any] = {
    "name": "tiny",
    "seeds": [0],
    "episodes": 2,
    "envs": [
        {
            "id": "rlsched/ServerlessPlacement-v0",
            "dataset": "wfinstances:srasearch-22",
            "env_kwargs": {"episode_length": 40},
        }
    ],
    "policies": ["first_fit"],
    "algos": [{"algo": "maskable_ppo", **TINY_TRAIN}],
    "reference": "first_fit",
}


@pytest.fixture
def tiny() -> dict[str, Any]:
    """A fresh copy of a 2-trial sweep config (first_fit, MaskablePPO for 256 steps)."""
    return copy.deepcopy(BASE)
