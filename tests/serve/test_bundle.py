"""PolicyBundle: numpy inference == torch twin == SB3, persistence, masks, conversion refusals."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from rlsched.serve.bundle import BUNDLE_FORMAT, PolicyBundle


def _torch_outputs(b: PolicyBundle, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    m = b.to_torch()
    with torch.no_grad():
        t = torch.from_numpy(x)
        return m.actor(t).numpy(), m.critic(t).numpy()


@pytest.mark.parametrize("hidden", [(64, 64), (32,), ()])
def test_fresh_numpy_matches_torch(hidden):
    b = PolicyBundle.fresh(16, 16, hidden=hidden, seed=3)
    x = np.random.default_rng(0).random((32, 16), dtype=np.float32)
    logits, value = _torch_outputs(b, x)
    np.testing.assert_allclose(b.logits(x), logits, atol=1e-5)
    np.testing.assert_allclose(b.value(x), value, atol=1e-5)
    assert b.logits(x).dtype == np.float32
    assert b.logits(x[0]).shape == (16,) and b.value(x[0]).shape == ()
    assert b.value(x).shape == (32,)


def test_fresh_is_sb3_like_init():
    b = PolicyBundle.fresh(10, 6, hidden=(64, 64), seed=0)
    w0 = b.actor_layers[0][0]  # (in, out) = (10, 64): orthogonal columns of norm sqrt(2)
    np.testing.assert_allclose(w0 @ w0.T, 2 * np.eye(10), atol=1e-4)
    head = b.actor_layers[-1][0]
    np.testing.assert_allclose(np.linalg.norm(head, axis=0), 0.01, rtol=1e-3)
    assert np.all(b.actor_layers[0][1] == 0)
    # nearly uniform initial policy
    p = b.probs(np.ones(10, np.float32))
    assert np.allclose(p, 1 / 6, atol=0.01)
    assert (
        PolicyBundle.fresh(10, 6, seed=0).logits(np.ones(10)).tolist()
        == b.logits(np.ones(10)).tolist()
    )


def test_normalisation_matches_torch_and_round_trips(tmp_path):
    rng = np.random.default_rng(1)
    f = PolicyBundle.fresh(8, 5, hidden=(16,), seed=1)
    b = f.with_weights(f.actor_layers, f.critic_layers)
    b = PolicyBundle(
        b.actor_layers, b.critic_layers, obs_mean=rng.random(8), obs_var=rng.random(8) + 0.1,
        obs_clip=2.0, meta={"x": 1},
    )  # fmt: skip
    x = (rng.random((20, 8)) * 20 - 10).astype(np.float32)  # some beyond the clip
    logits, value = _torch_outputs(b, x)
    np.testing.assert_allclose(b.logits(x), logits, atol=1e-5)
    np.testing.assert_allclose(b.value(x), value, atol=1e-5)
    b.save(tmp_path / "b")
    info = json.loads((tmp_path / "b" / "bundle.json").read_text())
    assert info["format"] == BUNDLE_FORMAT and info["state_dim"] == 8
    assert info["normalize"] == {"clip": 2.0, "eps": 1e-8} and "numpy" in info["versions"]
    c = PolicyBundle.load(tmp_path / "b")
    assert c.logits(x).tobytes() == b.logits(x).tobytes()
    assert c.value(x).tobytes() == b.value(x).tobytes()
    assert c.meta == {"x": 1} and c.normalized


def test_save_load_round_trip_exact(tmp_path):
    b = PolicyBundle.fresh(16, 16, seed=7, meta={"env_id": "e"})
    b.save(tmp_path)
    c = PolicyBundle.load(tmp_path)
    assert (c.state_dim, c.action_dim, c.hidden) == (16, 16, (64, 64))
    x = np.random.default_rng(2).random((5, 16), dtype=np.float32)
    assert np.array_equal(b.logits(x), c.logits(x))
    assert c.meta["env_id"] == "e"


def test_load_refuses_other_formats(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"bundle\.json"):
        PolicyBundle.load(tmp_path)
    (tmp_path / "bundle.json").write_text(json.dumps({"format": "other/1"}))
    with pytest.raises(ValueError, match="format"):
        PolicyBundle.load(tmp_path)


def test_torch_round_trip_keeps_weights():
    b = PolicyBundle.fresh(12, 7, hidden=(8, 8), seed=4)
    m = b.to_torch()
    with torch.no_grad():
        for p in m.parameters():
            p.add_(0.1)
    c = PolicyBundle.from_torch(m, like=b)
    x = np.random.default_rng(3).random((9, 12), dtype=np.float32)
    logits, _ = _torch_outputs(c, x)
    with torch.no_grad():
        np.testing.assert_allclose(c.logits(x), m.actor(torch.from_numpy(x)).numpy(), atol=1e-5)
    np.testing.assert_allclose(c.logits(x), logits, atol=1e-5)
    assert not np.allclose(c.logits(x), b.logits(x))


def test_masked_act_never_picks_a_masked_action():
    rng = np.random.default_rng(5)
    b = PolicyBundle.fresh(16, 16, seed=5)
    x = rng.random((500, 16), dtype=np.float32)
    masks = rng.random((500, 16)) < 0.3
    masks[np.arange(500), rng.integers(0, 16, 500)] = True  # at least one valid
    a = b.act(x, masks)
    assert a.dtype == np.int64 and a.shape == (500,)
    assert masks[np.arange(500), a].all()
    # greedy within the mask
    z = np.where(masks, b.logits(x), -np.inf)
    assert np.array_equal(a, z.argmax(1))
    one = b.act(x[0], masks[0])
    assert one.shape == () and masks[0, int(one)]
    # a mask forcing the single worst action
    worst = int(np.argmin(b.logits(x[1])))
    m = np.zeros(16, bool)
    m[worst] = True
    assert int(b.act(x[1], m)) == worst
    with pytest.raises(ValueError, match="no action"):
        b.act(x[:2], np.zeros((2, 16), bool))
    with pytest.raises(ValueError, match="states of shape"):
        b.logits(np.zeros(15))


def test_bundle_import_does_not_import_torch():
    code = (
        "import sys; import rlsched.serve, rlsched.serve.bundle, rlsched.serve.registry, "
        "rlsched.serve.store, rlsched.serve.learner; "
        "print('torch' in sys.modules, 'fastapi' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


# ---------------------------------------------------------------------------- from SB3
def _sb3_logits(model_dir, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Log-probabilities and values straight from the SB3 model (VecNormalize applied the SB3
    way; torch's Categorical normalises the logits, so compare log-softmaxes)."""
    from rlsched.policies.learned import LearnedPolicy

    lp = LearnedPolicy(model_dir)
    x = obs if lp.normalizer is None else lp.normalizer.normalize_obs(obs)
    obs_t, _ = lp.model.policy.obs_to_tensor(x)
    with torch.no_grad():
        dist = lp.model.policy.get_distribution(obs_t)
        v = lp.model.policy.predict_values(obs_t)
    return dist.distribution.logits.numpy(), v.numpy()[:, 0]


def _log_softmax(z: np.ndarray) -> np.ndarray:
    z = z.astype(np.float64)
    m = z.max(axis=-1, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(axis=-1, keepdims=True))


def _kube_obs(n: int, count: int = 64) -> tuple[np.ndarray, np.ndarray]:
    from rlsched.evaluate import make_env

    env = make_env("rlsched/KubeScheduling-v0", num_nodes=n)
    obs, _ = env.reset(seed=0)
    out, masks = [], []
    rng = np.random.default_rng(0)
    for _ in range(count):
        m = env.unwrapped.action_masks()
        out.append(obs)
        masks.append(m)
        obs, _, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(m))))
        if term or trunc:
            obs, _ = env.reset()
    return np.asarray(out, np.float32), np.asarray(masks)


@pytest.fixture(scope="module")
def kube_model(tmp_path_factory):
    pytest.importorskip("rlsched.envs.kube_scheduling")
    from rlsched.train import TrainConfig, train

    cfg = TrainConfig(
        env_id="rlsched/KubeScheduling-v0", dataset=None, eval_dataset=None,
        env_kwargs={"num_nodes": 3, "episode_length": 20}, algo="maskable_ppo",
        policy_net="mlp", net_arch=[32, 32], total_steps=128, n_envs=1, n_steps=64,
        batch_size=32, n_epochs=1, eval_freq=0, tensorboard=False, normalize_obs=True,
    )  # fmt: skip
    run = tmp_path_factory.mktemp("kube-run")
    train(cfg, run, progress=False)
    return run / "model"


def test_from_sb3_maskable_ppo_with_vecnormalize(kube_model, tmp_path):
    b = PolicyBundle.from_sb3(kube_model)
    assert (b.state_dim, b.action_dim, b.hidden) == (8, 8, (32, 32))
    assert b.normalized and b.obs_clip == 10.0
    assert b.meta["env_id"] == "rlsched/KubeScheduling-v0"
    assert b.meta["env_kwargs"]["num_nodes"] == 3 and b.meta["algo"] == "maskable_ppo"
    assert b.meta["source_path"].endswith("model")
    obs, masks = _kube_obs(3)
    ref_logits, ref_values = _sb3_logits(kube_model, obs)
    np.testing.assert_allclose(_log_softmax(b.logits(obs)), ref_logits, atol=1e-4)
    np.testing.assert_allclose(b.value(obs), ref_values, atol=1e-4)
    logits, value = _torch_outputs(b, obs)
    np.testing.assert_allclose(b.logits(obs), logits, atol=1e-5)
    np.testing.assert_allclose(b.value(obs), value, atol=1e-5)
    # same greedy masked actions as the SB3 model behind LearnedPolicy
    from rlsched.policies.learned import LearnedPolicy

    lp = LearnedPolicy(kube_model)
    expect = [lp.act(o, m) for o, m in zip(obs, masks, strict=True)]
    assert b.act(obs, masks).tolist() == expect
    b.save(tmp_path / "b")
    c = PolicyBundle.load(tmp_path / "b")
    assert np.array_equal(c.logits(obs), b.logits(obs))


def _cartpole_dir(tmp_path, activation=None, algo="ppo"):
    from stable_baselines3 import PPO

    from rlsched.train import TrainConfig
    from rlsched.train.trainer import _save_model_dir

    kw = {"net_arch": {"pi": [16, 16], "vf": [8]}}
    if activation is not None:
        kw["activation_fn"] = activation
    model = PPO(
        "MlpPolicy",
        "CartPole-v1",
        n_steps=32,
        batch_size=32,
        policy_kwargs=kw,
        device="cpu",
        seed=0,
    )
    cfg = TrainConfig(env_id="CartPole-v1", algo=algo, dataset=None)
    _save_model_dir(model, None, cfg, tmp_path / "m", "final")
    return tmp_path / "m"


def test_from_sb3_plain_ppo_without_normaliser(tmp_path):
    d = _cartpole_dir(tmp_path)
    b = PolicyBundle.from_sb3(d)
    assert (b.state_dim, b.action_dim, b.hidden, b.critic_hidden) == (4, 2, (16, 16), (8,))
    assert not b.normalized
    obs = np.random.default_rng(0).normal(size=(50, 4)).astype(np.float32)
    ref_logits, ref_values = _sb3_logits(d, obs)
    np.testing.assert_allclose(_log_softmax(b.logits(obs)), ref_logits, atol=1e-5)
    np.testing.assert_allclose(b.value(obs), ref_values, atol=1e-5)
    logits, value = _torch_outputs(b, obs)
    np.testing.assert_allclose(b.logits(obs), logits, atol=1e-5)
    np.testing.assert_allclose(b.value(obs), value, atol=1e-5)


def test_from_sb3_refuses_non_tanh(tmp_path):
    d = _cartpole_dir(tmp_path, activation=torch.nn.ReLU)
    from rlsched.errors import PolicyError

    with pytest.raises(PolicyError, match="not Tanh"):
        PolicyBundle.from_sb3(d)


def test_from_sb3_refuses_dqn(tmp_path):
    from rlsched.errors import PolicyError

    d = _cartpole_dir(tmp_path)
    meta = json.loads((d / "meta.json").read_text())
    meta["algo"] = "dqn"
    (d / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(PolicyError, match="not an actor-critic"):
        PolicyBundle.from_sb3(d)
