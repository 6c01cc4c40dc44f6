"""The node network's pooled value MLP (``node_value: pooled``): a cheaper update, saved with
the model, and a critic that runs on any node count; and its residual prior
(``node_prior_key``): the untrained policy is the heuristic whose key the prior is."""

from pathlib import Path
from typing import Any

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


def _residual_model(env: object, scale: float = -10.0, key: str = "node_done_gap") -> object:
    from sb3_contrib import MaskablePPO

    from rlsched.agents import networks

    kwargs = networks.node_policy_kwargs(prior_key=key, prior_scale=scale)
    return MaskablePPO(networks.MaskableNodePolicy, env, policy_kwargs=kwargs, seed=0)


@pytest.mark.parametrize(
    ("heuristic", "key", "candidates"),
    [
        ("heft", "node_done_gap", None),
        ("heft", "node_done_gap", 2),
        ("peft", "node_peft_gap", None),
    ],
)
def test_an_untrained_residual_policy_is_the_heuristic_its_prior_is_the_key_of(
    heuristic: str, key: str, candidates: int | None
) -> None:
    """``node_prior_key``: with a heuristic's key as the prior (HEFT's ``node_done_gap``,
    PEFT's ``node_peft_gap``) and the network's score at zero, the greedy policy is that
    heuristic on every decision, in torch and in numpy."""
    from rlsched.agents.networks import node_logits
    from rlsched.agents.node_numpy import NodeScorer

    kw = {} if candidates is None else {"candidates": candidates}
    env = make_env("rlsched/WorkflowOffloading-v0", "wfinstances:montage-58,epigenomics-41",
                   scenario="congested", finish_gap=True, optimistic_cost=True, **kw)  # fmt: skip
    model = _residual_model(env, key=key)
    scorer = NodeScorer.from_policy(model.policy)  # type: ignore[attr-defined]
    base = make_policy(heuristic, env)
    obs, _ = env.reset(seed=1)
    done, n = False, 0
    while not done:
        mask = env.unwrapped.action_masks()  # type: ignore[attr-defined]
        want = base.act(obs, mask)
        got, _ = model.predict(obs, action_masks=mask, deterministic=True)  # type: ignore[attr-defined]
        assert int(got) == want == scorer.act(obs, mask)
        z = node_logits(model.policy, obs)  # type: ignore[attr-defined]
        np.testing.assert_allclose(scorer.logits(obs), z, rtol=1e-5, atol=1e-5)
        obs, _, term, trunc, _ = env.step(want)
        done, n = term or trunc, n + 1
    assert n > 100


def test_a_residual_policy_learns_and_is_saved_with_its_prior(tmp_path: Path) -> None:
    """Training moves the prior's coefficient and the score (the residual); the saved model
    loads with both, and the numpy actor computes its logits."""
    from rlsched.agents.networks import node_logits

    env_kwargs = {"scenario": "congested", "finish_gap": True, "candidates": 2}
    cfg = _cfg(env_id="rlsched/WorkflowOffloading-v0", dataset="wfinstances:epigenomics-41",
               eval_dataset=None, env_kwargs=env_kwargs, node_prior_key="node_done_gap",
               node_prior_scale=-10.0, ent_coef=0.01)  # fmt: skip
    train(cfg, tmp_path, progress=False)
    env = make_env("rlsched/WorkflowOffloading-v0", "wfinstances:srasearch-22", **env_kwargs)
    pol = make_policy(f"learned:{tmp_path}/model", env)
    head = pol.model.policy.action_net
    assert head.prior_coef is not None and head.prior_coef.item() != -10.0
    assert head.score.weight.abs().sum().item() > 0.0
    assert pol._scorer is not None and pol._scorer.prior is not None
    obs, _ = env.reset(seed=0)
    z = node_logits(pol.model.policy, obs)
    np.testing.assert_allclose(pol._scorer.logits(obs), z, rtol=1e-5, atol=1e-5)


def test_the_prior_key_is_checked(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"node_prior_key.*node_nope"):
        train(_cfg(node_prior_key="node_nope"), tmp_path, progress=False)
    with pytest.raises(ConfigError, match="node_prior_key"):
        train(_cfg(node_prior_key="node_capacity", algo="masked_dqn"), tmp_path, progress=False)


def _untrained_prior_actors(env: Any, **prior: Any) -> list[Any]:
    """An untrained MaskablePPO node model with ``prior`` (``node_policy_kwargs``'s prior and
    global keys) on ``env``, as its two greedy actors: torch (``predict``) and numpy."""
    from sb3_contrib import MaskablePPO

    from rlsched.agents import networks
    from rlsched.agents.node_numpy import NodeScorer

    pk = networks.node_policy_kwargs(pooled_value=True, **prior)
    model = MaskablePPO(networks.MaskableNodePolicy, env, policy_kwargs=pk, seed=0)

    def torch_act(obs: Any, mask: np.ndarray) -> int:
        return int(model.predict(obs, action_masks=mask, deterministic=True)[0])

    return [torch_act, NodeScorer.from_policy(model.policy).act]


def _follow(env: Any, seed: int, heuristic: Any, actors: list[Any]) -> list[int]:
    """One episode of ``heuristic``'s play, each of ``actors`` asked at every decision and
    required to choose as it does; the heuristic's actions."""
    obs, _ = env.reset(seed=seed)
    done, played = False, []
    while not done:
        mask = env.unwrapped.action_masks()
        want = heuristic.act(obs, mask)
        for act in actors:
            assert act(obs, mask) == want
        played.append(int(want))
        obs, _, term, trunc, _ = env.step(want)
        done = term or trunc
    return played


@pytest.mark.parametrize("candidates", [None, 8])
def test_an_untrained_residual_policy_over_greedy_migration_is_greedy_migration(
    candidates: int | None,
) -> None:
    """PodRebalancing's ``node_greedy_rank`` as the prior: greedy_migration on every decision
    (moves and noop alike), through the numpy actor that scores only the valid moves."""
    kw = {} if candidates is None else {"candidates": candidates}
    env = make_env("rlsched/PodRebalancing-v0", "synthetic:pods", max_pods_per_node=30,
                   action_features=True, greedy_rank=True, **kw)  # fmt: skip
    _, scorer = _untrained_prior_actors(env, global_keys=["clock"],
                                        prior_key="node_greedy_rank", prior_scale=-3.0)  # fmt: skip
    played = _follow(env, 1, make_policy("greedy_migration", env), [scorer])
    moves = sum(a != 0 for a in played)
    assert moves > 0 and len(played) - moves > 0  # moves and noops


@pytest.mark.parametrize("prior_scale", [-10.0, -1.0])
def test_an_untrained_residual_policy_over_first_fit_is_first_fit(prior_scale: float) -> None:
    """VMPlacement's ``node_position`` as the prior (configs/vm_placement_recovering5_residual
    *.yaml): first_fit on every decision, in torch and in numpy, at either starting
    coefficient (the two NUMA actions of a server share a position; the first wins)."""
    env = make_env("rlsched/VMPlacement-v0", "synthetic:vm?seed=1", scenario="recovering-5",
                   grid_obs=False)  # fmt: skip
    actors = _untrained_prior_actors(env, prior_key="node_position", prior_scale=prior_scale)
    played = _follow(env, 10_000, make_policy("first_fit", env), actors)
    # not always the first server
    assert len(played) > 50 and sum(a > 1 for a in played) > 0


def test_a_node_model_acts_in_an_env_that_adds_observations_it_does_not_read() -> None:
    """Env arguments that only add observation keys (``lookahead``, ``optimistic_cost``) do not
    shut out a model trained without them: it acts as in the env it was trained for, ignoring
    the keys; a key it was trained with and the env lacks is refused by name."""
    from rlsched.agents import networks
    from rlsched.errors import PolicyError
    from rlsched.splits import SPLITS

    env_id = "rlsched/WorkflowOffloading-v0"
    # the zoo's congested entry until round C1: reads node_done_gap (finish_gap) only
    model = Path(__file__).parents[2] / "configs/zoo/start/workflow-congested-ppo/model"
    spec = f"learned:{model}"
    kw = {**SPLITS[env_id].env_kwargs, "scenario": "congested", "finish_gap": True}
    plain = make_env(env_id, "wfinstances:blast-43", **kw)
    more = make_env(env_id, "wfinstances:blast-43", **kw, lookahead=True, optimistic_cost=True)
    a, b = make_policy(spec, plain), make_policy(spec, more)
    obs_a, _ = plain.reset(seed=2)
    obs_b, _ = more.reset(seed=2)
    done, n = False, 0
    while not done:
        mask = plain.unwrapped.action_masks()  # type: ignore[attr-defined]
        act = a.act(obs_a, mask)
        assert b.act(obs_b, mask) == act
        # the torch network reads only its keys too (the resized path when nothing is valid)
        z = networks.node_logits(b.model.policy, obs_b)
        np.testing.assert_allclose(z, a.preferences(obs_a, mask), rtol=1e-4, atol=1e-4)
        obs_a, _, done, _, _ = plain.step(act)
        obs_b, *_ = more.step(act)
        n += 1
    assert n > 10
    with pytest.raises(PolicyError, match=r"lacks.*node_done_gap"):
        make_policy(spec, make_env(env_id, "wfinstances:blast-43", scenario="congested"))
