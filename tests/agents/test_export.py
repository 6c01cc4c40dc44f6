"""A zoo export holds the weights only: same actions as the run's model, smaller, and with
``critic=False`` a zeroed value function that deflates to almost nothing."""

import zipfile
from pathlib import Path

import numpy as np
import pytest

from rlsched.agents.export import export_model
from rlsched.agents.models import load_model
from rlsched.evaluate import make_env
from rlsched.policies import make_policy
from rlsched.train import TrainConfig, train


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run")
    cfg = TrainConfig(
        dataset="wfinstances:srasearch-22", eval_dataset="wfinstances:srasearch-22",
        total_steps=256, n_envs=2, n_steps=128, batch_size=64, n_epochs=1, eval_freq=256,
        eval_episodes=1, env_kwargs={"episode_length": 30}, seed=5,
    )  # fmt: skip
    train(cfg, out, progress=False)
    return out


def _actions(path: Path) -> list[int]:
    env = make_env("rlsched/ServerlessPlacement-v0", "wfinstances:blast-43", episode_length=30)
    pol = make_policy(f"learned:{path}", env)
    obs, _ = env.reset(seed=2)
    out, done = [], False
    while not done:
        a = int(pol.act(obs, env.unwrapped.action_masks()))
        out.append(a)
        obs, _, term, trunc, _ = env.step(a)
        done = term or trunc
    return out


def test_export_without_the_critic_acts_the_same_and_is_smaller(
    run_dir: Path, tmp_path: Path
) -> None:
    full = export_model(run_dir, tmp_path / "full")
    actor = export_model(run_dir, tmp_path / "actor", critic=False)
    assert actor < full < (run_dir / "model" / "model.zip").stat().st_size
    with zipfile.ZipFile(tmp_path / "actor" / "model.zip") as z:
        assert all(i.compress_type == zipfile.ZIP_DEFLATED for i in z.infolist())
    assert _actions(run_dir) == _actions(tmp_path / "full") == _actions(tmp_path / "actor")
    pol = load_model("maskable_ppo", tmp_path / "actor" / "model.zip").policy
    assert all(not p.any() for p in pol.value_net.parameters())
    assert all(not p.any() for p in pol.mlp_extractor.value_net.parameters())
    kept = load_model("maskable_ppo", run_dir / "model" / "model.zip").policy
    for name, p in pol.action_net.state_dict().items():
        assert np.array_equal(p.numpy(), kept.action_net.state_dict()[name].numpy())
