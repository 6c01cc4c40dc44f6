"""Residual policies over a heuristic's continuous action (rlsched.policies.residual)."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rlsched.envs.make import make_env
from rlsched.errors import ConfigError, PolicyError
from rlsched.policies.base import Policy
from rlsched.policies.registry import make_policy
from rlsched.policies.residual import ResidualAction, ResidualPolicy
from rlsched.train import TrainConfig, train

ENV = "rlsched/LLMAutoscaling-v0"
KW: dict[str, Any] = {"episode_duration": 60.0}


def _env() -> Any:
    return make_env(ENV, "azure-llm:code", **KW)


def _play(env: Any, act: Any, seed: int) -> tuple[list[np.ndarray], dict[str, float]]:
    """Every action of one episode and its final metrics."""
    obs, _ = env.reset(seed=seed)
    done, actions, info = False, [], {}
    while not done:
        a = np.asarray(act(obs, env.unwrapped.action_masks()), dtype=np.float32)
        actions.append(a)
        obs, _, term, trunc, info = env.step(a)
        done = term or trunc
    return actions, dict(info.get("metrics") or {})


class Constant(Policy):
    def __init__(self, value: float) -> None:
        self.value = value

    def act(self, observation: Any, mask: np.ndarray) -> np.ndarray:
        return np.full(2, self.value, dtype=np.float32)


def test_the_wrapper_plays_the_heuristic_plus_the_scaled_correction_clipped() -> None:
    plain, wrapped = _env(), _env()
    hpa = make_policy("hpa", plain, seed=0)
    env = ResidualAction(wrapped, make_policy("hpa", wrapped, seed=0), scale=0.5)
    obs, _ = env.reset(seed=4)
    pobs, _ = plain.reset(seed=4)
    hpa.reset(4)
    outputs = [np.array(o, dtype=np.float32) for o in ([0.4, -0.2], [1.0, 1.0], [-1.0, 0.0])] * 10
    seen = []
    for out in outputs:
        h = hpa.act(pobs, plain.unwrapped.action_masks())
        expect = np.clip(h + 0.5 * out, -1, 1).astype(np.float32)
        seen.append(not np.allclose(expect, h))
        pobs, r1, t1, u1, _ = plain.step(expect)
        obs, r2, t2, u2, _ = env.step(out)
        np.testing.assert_array_equal(obs, pobs)
        assert (r1, t1, u1) == (r2, t2, u2)
        if t1 or u1:
            break
    assert any(seen)  # the corrections did move the heuristic's actions


def _bounded_play(
    bounds: tuple[Any, Any], seed: int, rng_seed: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Up to 30 random outputs played through ``ResidualAction(hpa, 0.4, bounds)`` and, beside
    it, a plain env played with ``clip(hpa + 0.4 x clip(output, *bounds))``: the same
    observations every step. Returns (HPA's action, the played action) per step."""
    plain, wrapped = _env(), _env()
    hpa = make_policy("hpa", plain, seed=0)
    env = ResidualAction(wrapped, make_policy("hpa", wrapped, seed=0), 0.4, bounds)
    env.reset(seed=seed)
    pobs, _ = plain.reset(seed=seed)
    hpa.reset(seed)
    rng = np.random.default_rng(rng_seed)
    steps = []
    for _ in range(30):
        out = rng.uniform(-1, 1, 2).astype(np.float32)
        h = hpa.act(pobs, plain.unwrapped.action_masks())
        expect = np.clip(h + 0.4 * np.clip(out, *bounds), -1, 1).astype(np.float32)
        steps.append((h, expect))
        pobs, *_ = plain.step(expect)
        obs, _, term, trunc, _ = env.step(out)
        np.testing.assert_allclose(obs, pobs, atol=1e-6)  # float32 vs float64 sums
        if term or trunc:
            break
    return steps


def test_a_one_sided_range_only_ever_lowers_the_heuristic_action() -> None:
    steps = _bounded_play((-1.0, 0.0), seed=6, rng_seed=0)
    lowered = 0
    for h, expect in steps:
        assert np.all(expect <= h + 1e-7)
        lowered += int(np.any(expect < h - 1e-7))
    assert lowered > 0


def test_a_range_per_dimension_bounds_each_pool_on_its_own() -> None:
    # the prompt pool may move both ways, the token pool only down
    steps = _bounded_play(([-1.0, -1.0], [1.0, 0.0]), seed=7, rng_seed=1)
    raised_prompt = 0
    for h, expect in steps:
        assert expect[1] <= h[1] + 1e-7
        raised_prompt += int(expect[0] > h[0] + 1e-7)
    assert raised_prompt > 0


def test_a_residual_model_plays_the_range_its_meta_records(untrained: Path, tmp_path: Path) -> None:
    # an operator's narrower range written into a copy's meta.json is the range it plays
    copy_dir = tmp_path / "clamped"
    shutil.copytree(untrained / "model", copy_dir)
    meta = json.loads((copy_dir / "meta.json").read_text())
    meta["residual"]["range"] = [[-1.0, -1.0], [1.0, 0.0]]
    (copy_dir / "meta.json").write_text(json.dumps(meta))
    pol = make_policy(f"learned:{copy_dir}", _env(), seed=0)
    assert isinstance(pol, ResidualPolicy)
    assert pol.describe()["residual"]["range"] == [[-1.0, -1.0], [1.0, 0.0]]
    meta["residual"]["range"] = [[-1.0, -1.0, -1.0], [1.0, 0.0, 1.0]]
    (copy_dir / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(PolicyError, match="3 values per bound for 2 dimensions"):
        make_policy(f"learned:{copy_dir}", _env(), seed=0)


def test_a_play_range_is_what_the_saved_model_plays(tmp_path: Path) -> None:
    # trained two-sided, saved to play the token pool only below HPA
    run = tmp_path / "run"
    train(_cfg(residual_play_range=[[-1.0, -1.0], [1.0, 0.0]]), run, progress=False)
    meta = json.loads((run / "model" / "meta.json").read_text())
    assert meta["residual"]["range"] == [[-1.0, -1.0], [1.0, 0.0]]
    pol = make_policy(f"learned:{run}", _env(), seed=0)
    assert isinstance(pol, ResidualPolicy)
    np.testing.assert_array_equal(pol.bounds[1], [1.0, 0.0])


class Scripted(Policy):
    """Plays the given outputs in turn (the learned part of a ResidualPolicy)."""

    name = "scripted"

    def __init__(self, outputs: list[list[float]]) -> None:
        self.outputs, self.k = outputs, 0

    def reset(self, seed: int | None = None) -> None:
        self.k = 0

    def act(self, observation: Any, mask: np.ndarray) -> np.ndarray:
        self.k += 1
        return np.asarray(self.outputs[self.k - 1], dtype=np.float32)


def test_a_held_correction_counts_only_after_as_many_same_sign_requests_in_a_row() -> None:
    # pool 0 alternates (a thrashing model): never applied; pool 1 asks +, +, +, then 0, +
    outs = [[0.5, 0.4], [-0.5, 0.4], [0.5, 0.4], [-0.5, 0.0], [0.5, 0.4], [0.5, 0.4]]
    env = _env()
    hpa = make_policy("hpa", env, seed=0)
    held = ResidualPolicy(Scripted(outs), make_policy("hpa", env, seed=0), 0.4, env, hold=2)
    assert held.describe()["residual"]["hold"] == 2
    obs, _ = env.reset(seed=5)
    held.reset(5)
    hpa.reset(5)
    applied = []
    for _ in outs:
        mask = env.unwrapped.action_masks()
        h, a = hpa.act(obs, mask), held.act(obs, mask)
        applied.append(np.round((np.float64(a) - h) / 0.4, 5).tolist())
        obs, *_ = env.step(h)  # the same states for both: HPA's play
    # pool 0: signs +, -, +, -, +, + -> applied at the 6th only; pool 1: +, +, +, 0, +, +
    assert [x[0] for x in applied] == [0.0, 0.0, 0.0, 0.0, 0.0, 0.5]
    assert [x[1] for x in applied] == [0.0, 0.4, 0.4, 0.0, 0.0, 0.4]
    clone = copy.deepcopy(held)  # a rollout's copy keeps the run lengths, apart from the original
    assert clone._run.tolist() == held._run.tolist() == [2, 2]
    clone._run[:] = 0
    assert held._run.tolist() == [2, 2]
    with pytest.raises(PolicyError, match="hold must be an integer >= 1"):
        ResidualPolicy(Scripted(outs), make_policy("hpa", env, seed=0), 0.4, env, hold=0)


def test_a_play_hold_is_what_the_saved_model_plays(untrained: Path, tmp_path: Path) -> None:
    meta = json.loads((untrained / "model" / "meta.json").read_text())
    assert meta["residual"]["hold"] == 1  # what training saves by default
    copy_dir = tmp_path / "held"
    shutil.copytree(untrained / "model", copy_dir)
    meta["residual"]["hold"] = 4
    (copy_dir / "meta.json").write_text(json.dumps(meta))
    pol = make_policy(f"learned:{copy_dir}", _env(), seed=0)
    assert isinstance(pol, ResidualPolicy) and pol.hold == 4


def test_a_gated_correction_lowers_only_when_the_feature_allows_and_raises_only_below() -> None:
    env = _env()
    at = list(env.unwrapped.feature_names).index("slo_attainment")
    gate = {"feature": "slo_attainment", "lower_at_least": 0.95, "raise_below": 0.99}
    outs = [[-0.5, 0.5]] * 3
    pol = ResidualPolicy(Scripted(outs), make_policy("hpa", env, seed=0), 0.4, env, gate=gate)
    assert pol.describe()["residual"]["gate"] == gate
    obs, _ = env.reset(seed=5)
    pol.reset(5)
    hpa = make_policy("hpa", env, seed=0)
    hpa.reset(5)
    mask = env.unwrapped.action_masks()
    h = hpa.act(obs, mask)
    applied = []
    for value in (1.0, 0.97, 0.5):  # met: lower only; between: both; short: raise only
        o = np.array(obs, dtype=np.float32)
        o[at] = value
        applied.append(np.round((np.float64(pol.act(o, mask)) - h) / 0.4, 5).tolist())
    assert applied == [[-0.5, 0.0], [-0.5, 0.5], [0.0, 0.5]]
    one_way = ResidualPolicy(
        Scripted(outs),
        make_policy("hpa", env, seed=0),
        0.4,
        env,
        gate={"feature": "slo_attainment", "lower_at_least": 0.95},
    )
    o = np.array(obs, dtype=np.float32)
    o[at] = 1.0  # raising is ungated
    np.testing.assert_allclose(np.float64(one_way.act(o, mask)) - h, [-0.2, 0.2], atol=1e-6)


def test_a_gate_per_dimension_reads_each_pools_own_feature() -> None:
    # each pool raises only while busy (its own utilization >= 0.5), lowers only while idle
    env = _env()
    names = list(env.unwrapped.feature_names)
    at = [names.index("prompt_utilization"), names.index("token_utilization")]
    gate = {"feature": ["prompt_utilization", "token_utilization"],
            "raise_at_least": 0.5, "lower_below": 0.5}  # fmt: skip
    obs, _ = env.reset(seed=5)
    mask = env.unwrapped.action_masks()
    hpa = make_policy("hpa", env, seed=0)
    applied = []
    for outs, util in (([0.5, 0.5], (0.9, 0.1)), ([-0.5, -0.5], (0.9, 0.1))):
        pol = ResidualPolicy(Scripted([outs]), make_policy("hpa", env, seed=0), 0.4, env,
                             gate=gate)  # fmt: skip
        pol.reset(5)
        hpa.reset(5)
        o = np.array(obs, dtype=np.float32)
        o[at] = util
        h = hpa.act(o, mask)
        applied.append(np.round((np.float64(pol.act(o, mask)) - h) / 0.4, 5).tolist())
    # busy prompt pool, idle token pool: only the prompt pool may rise, only the token pool fall
    assert applied == [[0.5, 0.0], [0.0, -0.5]]
    # one bound per pool: the token pool's 0.05 lets it rise at 0.1, the prompt pool's 0.95 not
    per_pool = {"feature": gate["feature"], "raise_at_least": [0.95, 0.05]}
    pol = ResidualPolicy(Scripted([[0.5, 0.5]]), make_policy("hpa", env, seed=0), 0.4, env,
                         gate=per_pool)  # fmt: skip
    pol.reset(5)
    hpa.reset(5)
    o = np.array(obs, dtype=np.float32)
    o[at] = (0.9, 0.1)
    h = hpa.act(o, mask)
    assert np.round((np.float64(pol.act(o, mask)) - h) / 0.4, 5).tolist() == [0.0, 0.5]


@pytest.mark.parametrize(
    ("gate", "match"),
    [
        ({"feature": "slo_attainment"}, "needs one of lower_at_least, lower_below"),
        ({"feature": ["slo_attainment"] * 3, "raise_below": 1}, "3 features for 2 action dim"),
        ({"feature": [], "raise_below": 1}, 'must be {"feature"'),
        ({"feature": "slo_attainment", "raise_below": [1, 1, 1]}, "3 raise_below for 2"),
        ({"feature": "slo_attainment", "raise_below": []}, "must be numbers"),
        ({"feature": "slo", "lower_at_least": 0.9}, "'slo' is not one of this env's"),
        ({"feature": "slo_attainment", "lower": 0.9}, "unknown keys \\['lower'\\]"),
        ({"feature": "slo_attainment", "raise_below": "high"}, "must be numbers"),
        ([0.9], 'must be {"feature"'),
    ],
)
def test_a_bad_gate_is_refused_by_name(gate: Any, match: str) -> None:
    env = _env()
    with pytest.raises(PolicyError, match=match):
        ResidualPolicy(Constant(0.0), make_policy("hpa", env, seed=0), 0.4, env, gate=gate)


def test_a_play_gate_is_what_the_saved_model_plays(untrained: Path, tmp_path: Path) -> None:
    meta = json.loads((untrained / "model" / "meta.json").read_text())
    assert "gate" not in meta["residual"]  # training saves none by default
    copy_dir = tmp_path / "gated"
    shutil.copytree(untrained / "model", copy_dir)
    meta["residual"]["gate"] = {"feature": "slo_attainment", "lower_at_least": 0.99}
    (copy_dir / "meta.json").write_text(json.dumps(meta))
    pol = make_policy(f"learned:{copy_dir}", _env(), seed=0)
    assert isinstance(pol, ResidualPolicy) and pol.gate == meta["residual"]["gate"]


def test_a_residual_needs_a_continuous_action_space() -> None:
    env = make_env("rlsched/VMPlacement-v0")
    with pytest.raises(PolicyError, match="Box only"):
        ResidualAction(env, Constant(0.0), 1.0)


def _cfg(**kw: Any) -> TrainConfig:
    base: dict[str, Any] = dict(
        env_id=ENV, dataset="azure-llm:conv", eval_dataset=None, env_kwargs=dict(KW),
        algo="ppo", policy_net="mlp", net_arch=[16, 16], total_steps=64, n_envs=1, n_steps=32,
        batch_size=32, n_epochs=1, eval_freq=0, tensorboard=False, residual_policy="hpa",
        residual_scale=0.5, log_std_init=-1.0,
    )  # fmt: skip
    base.update(kw)
    return TrainConfig(**base)


@pytest.fixture(scope="module")
def untrained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # learning_rate 1e-12: the updates run, the actor's zeroed last layer hardly moves
    run = tmp_path_factory.mktemp("residual") / "run"
    train(_cfg(learning_rate=1e-12), run, progress=False)
    return run


def test_an_untrained_residual_model_is_its_heuristic(untrained: Path) -> None:
    env = _env()
    pol = make_policy(f"learned:{untrained}", env, seed=0)
    assert isinstance(pol, ResidualPolicy)
    assert pol.describe()["residual"] == {
        "policy": "hpa", "scale": 0.5, "range": [-1.0, 1.0], "hold": 1
    }  # fmt: skip
    hpa = make_policy("hpa", env, seed=0)
    for seed in (1, 2):
        pol.reset(seed)
        mine, m1 = _play(env, pol.act, seed)
        hpa.reset(seed)
        theirs, m2 = _play(env, hpa.act, seed)
        assert len(mine) == len(theirs) > 1
        for a, b in zip(mine, theirs, strict=True):
            np.testing.assert_allclose(a, b, atol=1e-6)
        assert m1 == m2


def test_a_residual_model_acts_over_its_heuristic_after_training(tmp_path: Path) -> None:
    run = tmp_path / "run"
    train(_cfg(learning_rate=0.05, total_steps=128, n_epochs=4), run, progress=False)
    env = _env()
    pol = make_policy(f"learned:{run}", env, seed=0)
    assert isinstance(pol, ResidualPolicy)
    hpa = make_policy("hpa", env, seed=0)
    obs, _ = env.reset(seed=3)
    pol.reset(3)
    hpa.reset(3)
    mask = env.unwrapped.action_masks()
    out = pol.learned.act(obs, mask)
    assert np.abs(out).max() > 1e-4  # trained: the correction is no longer zero
    h = hpa.act(obs, mask)
    pol2 = copy.deepcopy(pol)  # a rollout's copy: the heuristic's state copied, the net shared
    assert pol2.learned is pol.learned and pol2.base is not pol.base
    np.testing.assert_allclose(pol.act(obs, mask), np.clip(h + 0.5 * out, -1, 1), atol=1e-6)


def test_target_kl_stops_an_update_early_and_bounds_the_move(tmp_path: Path) -> None:
    # one rollout of 32 steps, one minibatch per epoch: with a tiny target_kl the second epoch
    # sees the KL of the first step and stops; without, all 8 epochs step
    obs, _ = _env().reset(seed=3)
    moves = {}
    for kl in (None, 1e-6):
        run = tmp_path / f"kl{kl}"
        train(_cfg(learning_rate=0.05, total_steps=32, n_epochs=8, target_kl=kl), run,
              progress=False)  # fmt: skip
        pol = make_policy(f"learned:{run}", _env(), seed=0)
        assert isinstance(pol, ResidualPolicy)
        assert pol.learned.model.target_kl == kl  # saved with the model, as SB3 saves it
        moves[kl] = float(np.abs(pol.learned.act(obs, np.ones(2, dtype=bool))).max())
    assert 0 < moves[1e-6] < 0.75 * moves[None]  # one Adam step against eight


def test_a_critic_warmup_trains_the_value_network_alone_then_the_actor(tmp_path: Path) -> None:
    from stable_baselines3 import PPO

    params = {}
    for name, kw in {
        "still": {"learning_rate": 1e-12},  # the same seed's initial weights, hardly moved
        "warm64": {"critic_warmup_steps": 64},  # two rollouts of 32 steps, both value-only
        "warm32": {"critic_warmup_steps": 32},  # the second update trains the actor too
    }.items():
        run = tmp_path / name
        train(_cfg(**{"learning_rate": 0.05, "total_steps": 64, "n_epochs": 2, **kw}), run,
              progress=False)  # fmt: skip
        model = PPO.load(run / "final" / "model.zip", device="cpu")
        params[name] = {k: v.numpy().copy() for k, v in model.policy.state_dict().items()}
    actor = [k for k in params["still"] if k.startswith(("action_net", "mlp_extractor.policy"))]
    critic = [k for k in params["still"] if k.startswith(("value_net", "mlp_extractor.value"))]
    assert actor and critic
    for k in actor:  # frozen throughout: still the initial weights (the last layer zero: HPA)
        np.testing.assert_allclose(params["warm64"][k], params["still"][k], atol=1e-9, err_msg=k)
    assert any(np.abs(params["warm64"][k] - params["still"][k]).max() > 1e-3 for k in critic)
    assert any(np.abs(params["warm32"][k] - params["still"][k]).max() > 1e-3 for k in actor)


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"algo": "maskable_ppo"}, "algo ppo"),
        ({"imitation_policy": "hpa"}, "no imitation_policy"),
        ({"residual_scale": 0.0}, "residual_scale must be > 0"),
        ({"residual_range": [0.1, 1.0]}, "residual_range must be"),
        ({"residual_range": [-1.0, -0.5]}, "0 is the heuristic itself"),
        ({"residual_range": [[-1.0, 0.0], [1.0, 0.0]]}, "low < high in every dimension"),
        ({"residual_range": [[-1.0, -1.0], [1.0, 0.0, 1.0]]}, "lists of one length"),
        ({"residual_range": [-1.0]}, "must be \\[low, high\\]"),
        ({"residual_play_range": [0.5, 1.0]}, "residual_play_range must be"),
        ({"residual_policy": None, "residual_play_range": [-1, 0]}, "need residual_policy"),
        ({"residual_policy": None, "residual_play_hold": 3}, "need residual_policy"),
        ({"residual_play_hold": 0}, "residual_play_hold must be an integer >= 1"),
        (
            {"residual_policy": None, "residual_play_gate": {"feature": "x", "raise_below": 1}},
            "need residual_policy",
        ),
        ({"residual_play_gate": {"feature": "x"}}, "residual_play_gate needs one of"),
        ({"target_kl": 0.0}, "target_kl must be > 0"),
        ({"critic_warmup_steps": -1}, "critic_warmup_steps must be >= 0"),
        ({"target_kl": 0.01, "algo": "dqn", "residual_policy": None}, "target_kl applies"),
    ],
)
def test_bad_residual_configs_are_refused(kw: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        _cfg(**kw).validate()


def test_a_play_gate_on_a_feature_the_env_lacks_is_refused_before_training(
    tmp_path: Path,
) -> None:
    gate = {"feature": "slo", "lower_at_least": 0.99}
    why = r"residual_play_gate of .*: residual gate feature 'slo' is not one"
    with pytest.raises(ConfigError, match=why):
        train(_cfg(residual_play_gate=gate), tmp_path / "a", progress=False)
    assert not (tmp_path / "a" / "model").exists()
    run = tmp_path / "b"
    train(_cfg(residual_play_gate={"feature": "slo_attainment", "lower_at_least": 0.99}), run,
          progress=False)  # fmt: skip
    meta = json.loads((run / "model" / "meta.json").read_text())
    assert meta["residual"]["gate"] == {"feature": "slo_attainment", "lower_at_least": 0.99}


def test_an_unknown_or_discrete_residual_base_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"residual_policy of .*'hpx'"):
        train(_cfg(residual_policy="hpx"), tmp_path / "a", progress=False)
    vm = _cfg(env_id="rlsched/VMPlacement-v0", dataset=None, env_kwargs={},
              residual_policy="first_fit")  # fmt: skip
    with pytest.raises(ConfigError, match="Box only"):
        train(vm, tmp_path / "b", progress=False)


def test_the_heuristic_start_is_the_first_candidate_model(tmp_path: Path) -> None:
    # no periodic evaluation falls within 64 steps: the kept model is the evaluated start
    run = tmp_path / "run"
    res = train(_cfg(eval_freq=10_000, eval_episodes=1), run, progress=False)
    assert res.eval_mean_reward is not None and np.isfinite(res.eval_mean_reward)
    assert json.loads((run / "model" / "meta.json").read_text())["name"] == "best"
    record = json.loads((run / "run.json").read_text())
    assert record["start_eval_mean_reward"] == res.eval_mean_reward
    env = _env()
    pol = make_policy(f"learned:{run}", env, seed=0)
    hpa = make_policy("hpa", env, seed=0)
    pol.reset(5)
    hpa.reset(5)
    mine, _ = _play(env, pol.act, 5)
    theirs, _ = _play(env, hpa.act, 5)
    np.testing.assert_allclose(np.array(mine), np.array(theirs), atol=1e-6)


def test_a_residual_corrects_only_a_heuristic(tmp_path: Path) -> None:
    env = _env()
    oracle = make_policy("clairvoyant:hpa", env, seed=0)
    with pytest.raises(PolicyError, match="corrects a heuristic, not 'clairvoyant'"):
        ResidualAction(env, oracle, 0.4)
    with pytest.raises(ConfigError, match="category 'oracle'"):
        train(_cfg(residual_policy="clairvoyant:hpa"), tmp_path / "run", progress=False)
