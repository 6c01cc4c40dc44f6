"""Imitation warm start: exact teacher data, a clone that copies it, the trainer uses it."""

import json
from pathlib import Path
from typing import Literal

import numpy as np
import pytest
import torch

from rlsched.errors import ConfigError
from rlsched.evaluate import make_env
from rlsched.policies import make_policy
from rlsched.train import TrainConfig, train
from rlsched.train.imitation import Demonstrations, collect, pretrain

ENV = "rlsched/WorkflowOffloading-v0"
DATA = "synthetic:placement?workflows=20&tasks=8&seed=5"
KW = {"num_workflows": 1, "reward": "makespan", "num_nodes": 3}


def _make():
    return make_env(ENV, DATA, **KW)


def test_collect_records_teacher_actions_masks_and_discounted_returns() -> None:
    demos = collect(_make, "greedy_eft", episodes=3, gamma=0.5, seed=7, progress=False)
    assert len(demos) == 3 * 8  # one decision per task
    assert demos.masks[np.arange(len(demos)), demos.actions].all()
    # replay the teacher: same actions, and returns are the discounted reward-to-go
    env = _make()
    pol = make_policy("greedy_eft", env, seed=7)
    i = 0
    for ep in range(3):
        obs, _ = env.reset(seed=7 + ep)
        rewards, done = [], False
        while not done:
            a = pol.act(obs, env.unwrapped.action_masks())
            assert a == demos.actions[i + len(rewards)]
            obs, r, done, _, _ = env.step(a)
            rewards.append(r)
        g = [0.0] * len(rewards)
        acc = 0.0
        for k in range(len(rewards) - 1, -1, -1):
            acc = rewards[k] + 0.5 * acc
            g[k] = acc
        np.testing.assert_allclose(demos.returns[i : i + len(rewards)], g, rtol=1e-5)
        i += len(rewards)


def test_dagger_collection_follows_the_learner_and_records_the_teacher() -> None:
    always_first = lambda obs, mask: int(np.flatnonzero(mask)[0])  # noqa: E731
    demos = collect(
        _make, "greedy_eft", episodes=2, gamma=1.0, seed=3, progress=False, behaviour=always_first
    )
    env = _make()
    teacher = make_policy("greedy_eft", env, seed=3)
    i = 0
    for ep in range(2):
        obs, _ = env.reset(seed=3 + ep)
        done, total = False, 0.0
        start = i
        while not done:
            mask = env.unwrapped.action_masks()
            assert demos.actions[i] == teacher.act(obs, mask)  # the label is the teacher's
            obs, r, done, _, _ = env.step(always_first(obs, mask))  # the learner acts
            total += r
            i += 1
        assert demos.returns[start] == pytest.approx(total, rel=1e-5)
    assert i == len(demos)


def test_parallel_collection_gives_the_serial_labels_in_order() -> None:
    """Workers play episodes by seed, so the labels do not depend on how many there are:
    teacher-acted and DAgger-style (a learner closure, which forked workers inherit)."""
    always_first = lambda obs, mask: int(np.flatnonzero(mask)[0])  # noqa: E731
    for behaviour in (None, always_first):
        serial = collect(_make, "heft", 5, 0.9, seed=11, progress=False, behaviour=behaviour)
        par = collect(_make, "heft", 5, 0.9, seed=11, progress=False, behaviour=behaviour,
                      workers=2)  # fmt: skip
        assert len(par) == len(serial) == 5 * 8
        np.testing.assert_array_equal(par.actions, serial.actions)
        np.testing.assert_array_equal(par.masks, serial.masks)
        np.testing.assert_allclose(par.returns, serial.returns)
        assert par.mean_episode_return == pytest.approx(serial.mean_episode_return)
        assert par.agreement == serial.agreement
        np.testing.assert_array_equal(par._changed(), serial._changed())
        for k, v in serial.obs.items():
            np.testing.assert_array_equal(par.obs[k], v)
    # the learner differs from the teacher somewhere, so the DAgger case checked something
    assert 0 < serial._changed().sum() < len(serial)


def test_episodes_cycle_over_several_envs_whatever_the_workers(tmp_path: Path) -> None:
    """A sequence of env factories: episode ``k`` plays in the ``k``-th env (cyclically), as
    the same seed would alone there, serially or in workers; the trainer's
    ``imitation_every_dataset`` gives its teacher one env per training workload."""
    six = "synthetic:placement?workflows=20&tasks=6&seed=6"
    makers = [_make, lambda: make_env(ENV, six, **KW)]
    mixed = collect(makers, "heft", 4, 0.9, seed=11, progress=False)
    par = collect(makers, "heft", 4, 0.9, seed=11, progress=False, workers=2)
    alone = [collect(makers[k % 2], "heft", 1, 0.9, seed=11 + k, progress=False)
             for k in range(4)]  # fmt: skip
    assert len(mixed) == 8 + 6 + 8 + 6
    expected = np.concatenate([d.actions for d in alone])
    np.testing.assert_array_equal(mixed.actions, expected)
    np.testing.assert_array_equal(par.actions, expected)
    for k, v in mixed.obs.items():
        np.testing.assert_array_equal(par.obs[k], v)
        np.testing.assert_array_equal(np.concatenate([d.obs[k] for d in alone]), v)

    cfg = TrainConfig(
        env_id=ENV, dataset=DATA, train_datasets=[six], eval_dataset=DATA, env_kwargs=KW,
        total_steps=64, n_envs=2, n_steps=32, batch_size=32, n_epochs=1, eval_freq=1000,
        eval_episodes=1, imitation_policy="heft", imitation_episodes=2, imitation_epochs=1,
        imitation_every_dataset=True, tensorboard=False,
    )  # fmt: skip
    train(cfg, tmp_path, progress=False)
    im = json.loads((tmp_path / "run.json").read_text())["imitation"]
    assert im["samples"] == 8 + 6  # one episode on each workload, not two on the first


def test_pretrain_makes_the_network_copy_the_teacher() -> None:
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    from rlsched.agents import networks

    torch.manual_seed(0)
    model = MaskablePPO(
        networks.MaskableNodePolicy,
        DummyVecEnv([_make]),
        policy_kwargs=networks.node_policy_kwargs(32, [32]),
        device="cpu",
        seed=0,
    )
    demos = collect(_make, "greedy_eft", episodes=30, gamma=0.99, seed=0, progress=False)

    def agreement() -> tuple[float, float]:
        """(argmax agreement, mean probability of the teacher's action)"""
        obs = {k: torch.as_tensor(v) for k, v in demos.obs.items()}
        with torch.no_grad():
            probs = model.policy.get_distribution(obs, action_masks=demos.masks).distribution.probs
        p_teacher = probs[torch.arange(len(demos)), torch.as_tensor(demos.actions)]
        return float((probs.argmax(1).numpy() == demos.actions).mean()), float(p_teacher.mean())

    _, p_before = agreement()
    stats = pretrain(model.policy, demos, epochs=30, batch_size=64, seed=0, progress=False)
    after, p_after = agreement()
    assert stats["samples"] == len(demos)
    assert after >= 0.85, after
    # a near-uniform start gives the teacher's action ~1/valid; the clone gives most of the mass
    assert p_before < 0.5 < p_after, (p_before, p_after)
    assert stats["accuracy"] >= 0.8


def test_dqn_cannot_warm_start() -> None:
    with pytest.raises(ConfigError, match="imitation_policy"):
        TrainConfig(algo="dqn", imitation_policy="heft").validate()


def test_trainer_warm_starts_and_records_it(tmp_path: Path) -> None:
    cfg = TrainConfig(
        env_id=ENV,
        dataset=DATA,
        eval_dataset=DATA,
        env_kwargs=KW,
        total_steps=128,
        n_envs=1,
        n_steps=64,
        batch_size=32,
        n_epochs=1,
        eval_freq=64,
        eval_episodes=1,
        imitation_policy="heft",
        imitation_episodes=4,
        imitation_epochs=2,
        imitation_dagger_rounds=1,
        tensorboard=False,
    )
    train(cfg, tmp_path, progress=False)
    run = json.loads((tmp_path / "run.json").read_text())
    im = run["imitation"]
    # the DAgger round adds the learner's 4 episodes, labelled by the teacher
    assert im["policy"] == "heft" and im["dagger_rounds"] == 1
    assert im["first_fit"]["samples"] == 4 * 8 and im["samples"] == 2 * 4 * 8
    assert np.isfinite(im["eval_mean_reward"])
    assert (tmp_path / "model" / "model.zip").is_file()


def test_imitation_alone_ships_the_clone_and_needs_a_teacher(tmp_path: Path) -> None:
    """``total_steps: 0``: the warm start (here with two labelling workers) is the whole run,
    and the model is the fitted clone, greedy actions and all."""
    cfg = TrainConfig(
        env_id=ENV, dataset=DATA, eval_dataset=DATA, env_kwargs=KW, total_steps=0, n_envs=1,
        n_steps=64, batch_size=32, eval_freq=64, eval_episodes=1, imitation_policy="heft",
        imitation_episodes=4, imitation_epochs=40, imitation_dagger_rounds=1,
        imitation_workers=2, tensorboard=False,
    )  # fmt: skip
    train(cfg, tmp_path, progress=False)
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["steps"] == 0 and run["imitation"]["samples"] == 2 * 4 * 8
    # the clone, not a PPO update of it, is the model: it plays HEFT's schedule on its labels
    env = _make()
    pol = make_policy(f"learned:{tmp_path / 'model'}", env, seed=0)
    heft = make_policy("heft", env, seed=0)
    agree = total = 0
    for ep in range(3):
        obs, _ = env.reset(seed=100 + ep)
        heft.reset(seed=100 + ep)
        done = False
        while not done:
            mask = env.unwrapped.action_masks()
            a, b = pol.act(obs, mask), heft.act(obs, mask)
            agree, total = agree + (a == b), total + 1
            obs, _, done, _, _ = env.step(b)
    assert agree / total >= 0.8, agree / total
    for bad in ({"imitation_policy": None}, {"imitation_policy": "heft", "expert_iterations": 1}):
        with pytest.raises(ConfigError, match="total_steps 0"):
            TrainConfig(env_id=ENV, total_steps=0, **bad).validate()
    with pytest.raises(ConfigError, match="imitation_workers"):
        TrainConfig(env_id=ENV, imitation_workers=0).validate()


def test_changed_labels_weigh_more_and_survive_aggregation_and_checkpoints(
    tmp_path: Path,
) -> None:
    """DAgger records where the teacher overruled the learner; the refit can weigh those
    labels more, and the flags survive ``+`` and ``save`` / ``load``."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    from rlsched.agents import networks
    from rlsched.train.imitation import Demonstrations

    always_first = lambda obs, mask: int(np.flatnonzero(mask)[0])  # noqa: E731
    dagger = collect(
        _make, "greedy_eft", episodes=4, gamma=1.0, seed=3, progress=False, behaviour=always_first
    )
    first = np.array([np.flatnonzero(m)[0] for m in dagger.masks])
    np.testing.assert_array_equal(dagger.changed, dagger.actions != first)
    assert 0 < dagger.changed.sum() < len(dagger)
    both = collect(_make, "greedy_eft", episodes=1, gamma=1.0, seed=0, progress=False) + dagger
    assert not both.changed[: len(both) - len(dagger)].any()  # the teacher's own: unchanged
    both.save(tmp_path / "demos.npz")
    np.testing.assert_array_equal(Demonstrations.load(tmp_path / "demos.npz").changed, both.changed)

    # the same states labelled twice, with contradicting actions: the weight decides the fit
    k = np.flatnonzero(dagger.changed)
    obs = {key: np.concatenate([v[k], v[k]]) for key, v in dagger.obs.items()}
    contra = Demonstrations(
        obs, np.concatenate([dagger.masks[k]] * 2), np.concatenate([dagger.actions[k], first[k]]),
        np.zeros(2 * len(k), np.float32), 1, 0.0,
        changed=np.r_[np.ones(len(k), bool), np.zeros(len(k), bool)],
    )  # fmt: skip
    share = {}
    for weight in (5.0, 0.2):
        torch.manual_seed(0)
        model = MaskablePPO(networks.MaskableNodePolicy, DummyVecEnv([_make]), device="cpu",
                            policy_kwargs=networks.node_policy_kwargs(32, [32]), seed=0)
        stats = pretrain(model.policy, contra, epochs=60, batch_size=64, seed=0,
                         progress=False, changed_weight=weight)
        ob = {key: torch.as_tensor(v[: len(k)]) for key, v in obs.items()}
        with torch.no_grad():
            probs = model.policy.get_distribution(ob, action_masks=contra.masks[: len(k)])
        picked = probs.distribution.probs.argmax(1).numpy()
        share[weight] = float((picked == dagger.actions[k]).mean())  # the teacher's label
        assert np.isfinite(stats["changed_accuracy"])
    # weighted up, the changed labels win most states; weighted down, the learner's own do
    assert share[5.0] >= 0.6 and share[0.2] <= 0.4 and share[5.0] - share[0.2] >= 0.4, share


def test_changed_weight_must_be_positive() -> None:
    with pytest.raises(ConfigError, match="imitation_changed_weight"):
        TrainConfig(env_id=ENV, imitation_changed_weight=0.0).validate()


def test_the_oracle_labels_a_learners_states_with_actions_valid_there() -> None:
    """The clairvoyant oracle follows its own best trajectory; when a learner plays other
    actions (DAgger) it must drop that trajectory, or it labels states with the next action of
    a trajectory the env left (often invalid there)."""

    def make_pods():
        return make_env("rlsched/PodRebalancing-v0", "synthetic:pods", max_pods_per_node=30,
                        action_features=True, migration_cost=0.003, candidates=8)  # fmt: skip

    noop = lambda obs, mask: 0  # noqa: E731 - a learner that never moves a pod
    demos = collect(make_pods, "clairvoyant:greedy_migration", episodes=2, gamma=0.9, seed=0,
                    progress=False, behaviour=noop)  # fmt: skip
    assert demos.changed is not None and demos.changed.any()  # the oracle would move pods
    assert demos.masks[np.arange(len(demos)), demos.actions].all()


def _make_pods():
    return make_env("rlsched/PodRebalancing-v0", "synthetic:pods", max_pods_per_node=30,
                    action_features=True, migration_cost=0.003, candidates=8)  # fmt: skip


def test_a_search_teacher_records_its_action_values_through_aggregation_and_checkpoints(
    tmp_path: Path,
) -> None:
    demos = collect(_make_pods, "clairvoyant:greedy_migration", episodes=2, gamma=0.9, seed=0,
                    progress=False)  # fmt: skip
    assert demos.values is not None and demos.values.shape == demos.masks.shape
    valued = np.isfinite(demos.values)
    assert not (valued & ~demos.masks).any()  # only valid actions are valued
    searched = valued.any(1)
    assert searched.mean() > 0.5
    # every action valued where the oracle searched: it rolls out all 9 anchored moves
    assert (valued[searched] == demos.masks[searched]).all()
    assert valued[np.flatnonzero(searched), demos.actions[searched]].all()
    plain = collect(_make_pods, "greedy_migration", episodes=1, gamma=0.9, seed=0, progress=False)
    assert plain.values is None  # a heuristic values nothing
    both = plain + demos
    assert both.values is not None and np.isnan(both.values[: len(plain)]).all()
    both.save(tmp_path / "demos.npz")
    again = Demonstrations.load(tmp_path / "demos.npz")
    np.testing.assert_array_equal(again.values, both.values)
    three = Demonstrations.concat([plain, demos, plain])  # one copy: the same as adding
    added = plain + demos + plain
    assert three.episodes == added.episodes == 4 and len(three) == len(added)
    assert three.mean_episode_return == pytest.approx(added.mean_episode_return)
    for k in added.obs:
        np.testing.assert_array_equal(three.obs[k], added.obs[k])
    for name in ("masks", "actions", "returns", "values", "changed"):
        np.testing.assert_array_equal(getattr(three, name), getattr(added, name))


@pytest.mark.parametrize("loss", ["mse", "kl"])
def test_pretrain_on_values_follows_clear_values_and_keeps_preferences_where_they_tie(
    loss: Literal["mse", "kl"],
) -> None:
    """``target="values"``: fitted to the values alone, the highest-valued action wins where
    they differ; with ``values_prior=1`` the model keeps its own choice where they tie; by
    either loss."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    from rlsched.agents import networks

    demos = collect(_make, "greedy_eft", episodes=20, gamma=1.0, seed=0, progress=False)
    several = demos.masks.sum(1) >= 2
    last = np.array([np.flatnonzero(m)[-1] for m in demos.masks])

    def model_and_choice() -> tuple[object, object]:
        torch.manual_seed(0)
        model = MaskablePPO(networks.MaskableNodePolicy, DummyVecEnv([_make]), device="cpu",
                            policy_kwargs=networks.node_policy_kwargs(32, [32]), seed=0)
        pretrain(model.policy, demos, epochs=30, batch_size=64, seed=0, progress=False)

        def choice() -> tuple[np.ndarray, float]:
            """The argmax per state and the mean probability of it, where several are valid."""
            obs = {k: torch.as_tensor(v) for k, v in demos.obs.items()}
            with torch.no_grad():
                dist = model.policy.get_distribution(obs, action_masks=demos.masks)
            probs = dist.distribution.probs.numpy()
            return probs.argmax(1), float(probs.max(1)[several].mean())

        return model, choice

    # clear values, fitted alone: the last valid action is worth 1, the others 0
    model, choice = model_and_choice()
    assert (choice()[0][several] == demos.actions[several]).mean() > 0.8  # the teacher's clone
    clear = np.where(demos.masks, 0.0, np.nan).astype(np.float32)
    clear[np.arange(len(demos)), last] = 1.0
    demos.values = clear
    stats = pretrain(model.policy, demos, epochs=60, batch_size=64, seed=0, progress=False,
                     target="values", values_loss=loss)  # fmt: skip
    assert stats["valued_states"] == several.sum()
    assert (choice()[0][several] == last[several]).mean() > 0.9, stats
    assert stats["best_accuracy"] > 0.9

    # tied values: with the prior the clone's preferences stay; without it they flatten
    kept = {}
    for prior in (1.0, 0.0):
        demos.values = None
        model, choice = model_and_choice()
        before, p_before = choice()
        demos.values = np.where(demos.masks, 0.0, np.nan).astype(np.float32)
        pretrain(model.policy, demos, epochs=30, batch_size=64, seed=0, progress=False,
                 target="values", values_prior=prior, values_loss=loss)  # fmt: skip
        after, p_after = choice()
        kept[prior] = p_after / p_before
        if prior:
            assert (after[several] == before[several]).mean() > 0.95
    assert kept[1.0] > 0.9 and kept[0.0] < 0.7, kept


def test_kl_fit_ignores_states_with_fewer_than_two_valued_actions() -> None:
    """Unvalued states (no value, or one) weigh nothing in the KL fit and poison nothing: the
    loss and every weight stay finite, and the weights do not move when no state has two."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    from rlsched.agents import networks

    demos = collect(_make, "greedy_eft", episodes=4, gamma=1.0, seed=0, progress=False)
    torch.manual_seed(0)
    model = MaskablePPO(networks.MaskableNodePolicy, DummyVecEnv([_make]), device="cpu",
                        policy_kwargs=networks.node_policy_kwargs(16, [16]), seed=0)  # fmt: skip
    actor = [p for n, p in model.policy.named_parameters() if "value" not in n]
    values = np.where(demos.masks, 1.0, np.nan).astype(np.float32)
    values[::2] = np.nan  # half the states unvalued
    first = np.array([np.flatnonzero(m)[0] for m in demos.masks])
    values[1::2][:, :] = np.nan  # the others valued at one action only
    values[np.arange(1, len(demos), 2), first[1::2]] = 1.0
    demos.values = values
    before = [p.detach().clone() for p in actor]
    stats = pretrain(model.policy, demos, epochs=3, batch_size=16, seed=0, progress=False,
                     target="values", values_loss="kl", value_coef=0.0)  # fmt: skip
    assert np.isfinite(stats["action_loss"]) and stats["action_loss"] == 0.0
    assert all(torch.isfinite(p).all() for p in model.policy.parameters())
    assert all(torch.equal(a, b) for a, b in zip(actor, before, strict=True))


def test_values_need_a_teacher_that_gives_them() -> None:
    demos = collect(_make, "greedy_eft", episodes=1, gamma=1.0, seed=0, progress=False)
    with pytest.raises(ValueError, match="values"):
        pretrain(object(), demos, epochs=1, progress=False, target="values")
    with pytest.raises(ConfigError, match="imitation_target"):
        TrainConfig(env_id=ENV, imitation_target="choices").validate()
    with pytest.raises(ValueError, match="values_loss"):
        pretrain(object(), demos, epochs=1, progress=False, target="values",
                 values_loss="l1")  # type: ignore[arg-type]  # fmt: skip
    with pytest.raises(ConfigError, match="imitation_values_loss"):
        TrainConfig(env_id=ENV, imitation_values_loss="l1").validate()


def test_trainer_fits_the_teachers_values_when_asked(tmp_path: Path) -> None:
    cfg = TrainConfig(
        env_id=ENV, dataset=DATA, eval_dataset=DATA, env_kwargs=KW, total_steps=64, n_envs=1,
        n_steps=64, batch_size=32, n_epochs=1, eval_freq=1000, eval_episodes=1,
        imitation_policy="clairvoyant:greedy_eft", imitation_episodes=3, imitation_epochs=2,
        imitation_target="values", imitation_values_prior=1.0, tensorboard=False,
    )  # fmt: skip
    train(cfg, tmp_path, progress=False)
    im = json.loads((tmp_path / "run.json").read_text())["imitation"]
    assert im["values_prior"] == 1.0 and 0 < im["valued_states"] <= im["samples"] == 3 * 8
    assert 0.0 <= im["best_accuracy"] <= 1.0 and im["values_scale"] > 0


def test_a_warm_start_keeps_its_labels_and_a_refit_reuses_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The labels are saved with what made them; a run folder given them fits them without
    collecting (another prior, the same labels), and a config that would collect others is
    refused, naming the field."""
    import shutil

    from rlsched.train import trainer

    base = dict(
        env_id=ENV, dataset=DATA, eval_dataset=DATA, env_kwargs=KW, total_steps=0, n_envs=1,
        n_steps=64, batch_size=32, eval_freq=1000, eval_episodes=1,
        imitation_policy="clairvoyant:greedy_eft", imitation_episodes=3, imitation_epochs=2,
        imitation_target="values", tensorboard=False,
    )  # fmt: skip
    first = tmp_path / "first"
    train(TrainConfig(**base, imitation_values_prior=1.0), first, progress=False)
    saved = Demonstrations.load(first / trainer.WARM_LABELS)
    assert len(saved) == 3 * 8 and saved.values is not None
    assert "labels_reused" not in json.loads((first / "run.json").read_text())["imitation"]

    second = tmp_path / "second"
    shutil.copytree(first / "teacher", second / "teacher")

    def no_teacher(*args: object, **kwargs: object) -> None:
        raise AssertionError("the labels were there: nothing to collect")

    with monkeypatch.context() as m:
        m.setattr(trainer.imitation_mod, "collect", no_teacher)
        train(TrainConfig(**base, imitation_values_prior=0.0), second, progress=False)
    im = json.loads((second / "run.json").read_text())["imitation"]
    assert im["labels_reused"].endswith("warm_start.npz") and im["values_prior"] == 0.0
    assert im["samples"] == 3 * 8

    third = tmp_path / "third"
    shutil.copytree(first / "teacher", third / "teacher")
    with pytest.raises(ConfigError, match="imitation_episodes"):
        train(TrainConfig(**{**base, "imitation_episodes": 4}), third, progress=False)
