"""The same config and seed train to the same weights (the run is reproducible)."""

from pathlib import Path

import torch

from rlsched.policies.learned import algo_class
from rlsched.train import TrainConfig, train


def _weights(run: Path) -> dict[str, torch.Tensor]:
    return algo_class("maskable_ppo").load(run / "final" / "model.zip").policy.state_dict()


def test_same_seed_same_weights(tmp_path: Path) -> None:
    cfg = dict(
        dataset="wfinstances:srasearch-22",
        total_steps=256,
        n_envs=2,
        n_steps=64,
        batch_size=64,
        n_epochs=2,
        eval_freq=0,
        tensorboard=False,
        env_kwargs={"episode_length": 40},
    )
    train(TrainConfig(**cfg, seed=5), tmp_path / "a", progress=False)
    train(TrainConfig(**cfg, seed=5), tmp_path / "b", progress=False)
    train(TrainConfig(**cfg, seed=6), tmp_path / "c", progress=False)
    a, b, c = (_weights(tmp_path / x) for x in "abc")
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)
