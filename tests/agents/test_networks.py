"""The node network's pooled value MLP (``node_value: pooled``): a cheaper update, saved with
the model, and a critic that runs on any node count."""

from pathlib import Path

import numpy as np
import pytest
import torch

from rlsched.agents.networks import PooledValueMlp
from rlsched.errors import ConfigError
from rlsched.evaluate import make_env
from rlsched.policies import make_policy
from rlsched.train import TrainConfig, train


def _cfg(**kw: object) -> TrainConfig:
    base = dict(
        dataset="wfinstances:srasearch-22", total_steps=256, n_envs=2, n_steps=64,
        batch_size=64, n_epochs=1, eval_freq=0, tensorboard=False,
        env_kwargs={"episode_length": 40}, seed=1,
    )
    return TrainConfig(**{**base, **kw})  # type: ignore[arg-type]


@pytest.mark.parametrize("algo", ["maskable_ppo", "ppo"])
def test_pooled_value_reads_only_the_pooled_embeddings_and_survives_save(
    tmp_path: Path, algo: str
) -> None:
    train(_cfg(algo=algo, node_value="pooled"), tmp_path, progress=False)
    env = make_env("rlsched/ServerlessPlacement-v0", "wfinstances:blast-43", episode_length=40)
    pol = make_policy(f"learned:{tmp_path}/model", env)
    policy = pol.model.policy
    ext = policy.mlp_extractor
    assert isinstance(ext, PooledValueMlp)  # reloaded as trained
    hidden = policy.features_extractor.hidden
    first = next(m for m in ext.value_net if isinstance(m, torch.nn.Linear))
    assert first.in_features == 3 * hidden  # not 10 * hidden + 3 * hidden
    # the value is blind to the per-node embeddings: changing them leaves it unchanged
    feats = torch.randn(4, policy.features_dim)
    other = feats.clone()
    other[:, : -3 * hidden] = torch.randn(4, policy.features_dim - 3 * hidden)
    torch.testing.assert_close(ext.forward_critic(feats), ext.forward_critic(other))
    assert torch.equal(ext.forward_actor(feats), feats)
    # and the model still acts within the mask
    obs, _ = env.reset(seed=0)
    for _ in range(10):
        mask = env.unwrapped.action_masks()
        a = pol.act(obs, mask)
        assert mask[a]
        obs, *_ = env.step(a)


def test_pooled_critic_values_a_cluster_of_another_size(tmp_path: Path) -> None:
    train(_cfg(node_value="pooled"), tmp_path, progress=False)
    env = make_env("rlsched/ServerlessPlacement-v0", "wfinstances:blast-43", num_nodes=25)
    pol = make_policy(f"learned:{tmp_path}/model", env)
    policy = pol.model.policy
    obs, _ = env.reset(seed=0)
    x = {k: torch.as_tensor(np.asarray(v))[None] for k, v in obs.items()}
    with torch.no_grad():
        v = policy.value_net(policy.mlp_extractor.forward_critic(policy.features_extractor(x)))
    assert v.shape == (1, 1) and torch.isfinite(v).all()


def test_node_value_is_checked() -> None:
    with pytest.raises(ConfigError, match="node_value"):
        _cfg(node_value="nodes").validate()
