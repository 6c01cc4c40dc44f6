"""The SB3 VecEnv adapter: same data as DummyVecEnv of Monitor-wrapped single envs, masks for
sb3-contrib, and `vec_env: batched` training that matches `dummy` training exactly."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
import torch
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

from rlsched.errors import ConfigError
from rlsched.train import TrainConfig, train
from rlsched.train import envs as train_envs
from rlsched.vector import make_sb3_vec_env

ENV_ID = "rlsched/ServerlessPlacement-v0"


def test_adapter_matches_dummy_vec_env_of_monitored_single_envs(tmp_path: Path) -> None:
    cfg = TrainConfig(dataset="wfinstances:all", env_kwargs={"episode_length": 30}, seed=4)
    dummy = train_envs.vec_env(cfg, cfg.dataset, 3, cfg.seed, None)
    batched = make_sb3_vec_env(
        ENV_ID, 3, cfg.dataset, monitor_dir=tmp_path / "monitor", **cfg.env_kwargs
    )
    assert is_masking_supported(batched)
    assert batched.observation_space == dummy.observation_space
    assert batched.action_space == dummy.action_space
    dummy.seed(cfg.seed)
    batched.seed(cfg.seed)
    od, ob = dummy.reset(), batched.reset()
    rng = np.random.default_rng(0)
    episodes = 0
    for t in range(200):
        for k in od:
            np.testing.assert_array_equal(ob[k], od[k], f"t={t} {k}")
        md, mb = get_action_masks(dummy), get_action_masks(batched)
        np.testing.assert_array_equal(mb, md)
        actions = (rng.random(md.shape) * md).argmax(axis=1)
        od, rd, dd, infos_d = dummy.step(actions)
        ob, rb, db, infos_b = batched.step(actions)
        assert rb.dtype == rd.dtype == np.float32
        np.testing.assert_array_equal(rb, rd)
        np.testing.assert_array_equal(db, dd)
        for b in np.flatnonzero(dd):
            episodes += 1
            ib, id_ = infos_b[b], infos_d[b]
            assert ib["episode"]["r"] == id_["episode"]["r"]
            assert ib["episode"]["l"] == id_["episode"]["l"]
            assert ib["metrics"] == id_["metrics"]
            assert ib["TimeLimit.truncated"] is False
            for k, v in id_["terminal_observation"].items():
                np.testing.assert_array_equal(ib["terminal_observation"][k], v)
    assert episodes >= 6
    batched.close()
    files = sorted((tmp_path / "monitor").glob("*.monitor.csv"))
    assert [f.name for f in files] == ["0.monitor.csv", "1.monitor.csv", "2.monitor.csv"]
    with files[0].open() as fh:
        assert fh.readline().startswith("#{")
        rows = list(csv.DictReader(fh))
    assert rows and {"r", "l", "t"} <= set(rows[0])


def test_env_method_and_attributes() -> None:
    venv = make_sb3_vec_env(ENV_ID, 2, num_nodes=5)
    venv.seed(0)
    venv.reset()
    masks = venv.env_method("action_masks")
    assert len(masks) == 2 and masks[0].shape == (5,)
    assert venv.env_method("action_masks", indices=[1])[0].tolist() == masks[1].tolist()
    assert venv.get_attr("num_nodes") == [5, 5]
    assert len(venv.env_method("metrics")) == 2
    assert venv.env_is_wrapped(object) == [False, False]  # type: ignore[arg-type]
    with pytest.raises(AttributeError):
        venv.set_attr("num_nodes", 3)
    with pytest.raises(AttributeError):
        venv.get_attr("no_such_attribute")
    venv.close()


def _tiny(vec_env: str, **over: object) -> TrainConfig:
    kw: dict = {
        "dataset": "wfinstances:srasearch-22",
        "eval_dataset": "wfinstances:srasearch-22",
        "env_kwargs": {"episode_length": 40},
        "total_steps": 192,
        "n_envs": 3,
        "n_steps": 32,
        "batch_size": 48,
        "n_epochs": 2,
        "eval_freq": 0,
        "tensorboard": False,
        "seed": 2,
        "vec_env": vec_env,
    }
    kw.update(over)
    return TrainConfig(**kw)  # type: ignore[arg-type]


def test_batched_training_equals_dummy_training(tmp_path: Path) -> None:
    from sb3_contrib import MaskablePPO

    params = {}
    for vec_env in ("dummy", "batched"):
        res = train(_tiny(vec_env), tmp_path / vec_env, progress=False)
        assert res.steps == 192
        model = MaskablePPO.load(tmp_path / vec_env / "final" / "model.zip", device="cpu")
        params[vec_env] = [p.detach().clone() for p in model.policy.parameters()]
        monitors = sorted((tmp_path / vec_env / "monitor").glob("*.monitor.csv"))
        assert len(monitors) == 3
    for pd, pb in zip(params["dummy"], params["batched"], strict=True):
        assert torch.equal(pd, pb)
    # the same episodes were logged
    for r in range(3):
        rows = []
        for vec_env in ("dummy", "batched"):
            with (tmp_path / vec_env / "monitor" / f"{r}.monitor.csv").open() as fh:
                fh.readline()
                rows.append([(x["r"], x["l"]) for x in csv.DictReader(fh)])
        assert rows[0] == rows[1] and rows[0]


def test_subproc_training_equals_dummy_training(tmp_path: Path) -> None:
    """`vec_env: subproc` steps the same envs in their own processes: the same weights."""
    from sb3_contrib import MaskablePPO

    params = {}
    for vec_env in ("dummy", "subproc"):
        res = train(_tiny(vec_env, n_envs=2, batch_size=32), tmp_path / vec_env, progress=False)
        assert res.steps == 192
        model = MaskablePPO.load(tmp_path / vec_env / "final" / "model.zip", device="cpu")
        params[vec_env] = [p.detach().clone() for p in model.policy.parameters()]
        assert len(list((tmp_path / vec_env / "monitor").glob("*.monitor.csv"))) == 2
    for pd, ps in zip(params["dummy"], params["subproc"], strict=True):
        assert torch.equal(pd, ps)


def test_batched_training_with_evaluation_and_mlp_policy(tmp_path: Path) -> None:
    res = train(
        _tiny("batched", eval_freq=96, eval_episodes=1, policy_net="mlp", n_envs=2),
        tmp_path,
        progress=False,
    )
    assert res.eval_mean_reward is not None
    assert (tmp_path / "model" / "vecnormalize.pkl").is_file()


def test_vec_env_config_is_checked() -> None:
    with pytest.raises(ConfigError, match="vec_env"):
        TrainConfig.from_dict({"vec_env": "threads"})
    with pytest.raises(ConfigError, match="not available for rlsched/KubeScheduling-v0"):
        TrainConfig.from_dict({"vec_env": "batched", "env_id": "rlsched/KubeScheduling-v0"})
    assert TrainConfig.from_dict({"vec_env": "batched"}).vec_env == "batched"
    assert TrainConfig.from_dict({"vec_env": "subproc"}).vec_env == "subproc"
