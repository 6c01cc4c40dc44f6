"""Expert iteration (the search teacher over the student labels the student's states), starting
from another model's weights, and checkpoints a run resumes from."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rlsched.agents.models import load_model
from rlsched.errors import ConfigError
from rlsched.train import TrainConfig, train
from rlsched.train import trainer as trainer_mod
from rlsched.train.imitation import Demonstrations

ENV = "rlsched/WorkflowOffloading-v0"
DATA = "synthetic:placement?workflows=20&tasks=8&seed=5"
KW = {"num_workflows": 1, "reward": "makespan", "num_nodes": 3}


def _cfg(**over: Any) -> TrainConfig:
    base: dict[str, Any] = {
        "env_id": ENV, "dataset": DATA, "eval_dataset": DATA, "env_kwargs": KW,
        "total_steps": 128, "n_envs": 1, "n_steps": 64, "batch_size": 32, "n_epochs": 1,
        "eval_freq": 64, "eval_episodes": 1, "tensorboard": False, "checkpoint_freq": 64,
    }  # fmt: skip
    base.update(over)
    return TrainConfig(**base)


def _run(path: Path) -> dict[str, Any]:
    return dict(json.loads((path / "run.json").read_text()))


def test_expert_iteration_labels_the_students_states_with_rollouts_over_the_student(
    tmp_path: Path,
) -> None:
    cfg = _cfg(
        total_steps=256, imitation_policy="rollout", imitation_episodes=2, imitation_epochs=2,
        expert_iterations=1,
    )  # fmt: skip
    train(cfg, tmp_path, progress=False)
    run = _run(tmp_path)
    assert run["imitation"]["policy"] == "rollout" and run["imitation"]["samples"] == 2 * 8
    (rnd,) = run["expert_rounds"]
    assert rnd["round"] == 1 and rnd["teacher"] == f"rollout:learned:{tmp_path / 'model'}"
    # the round's 2 episodes are the student's own, labelled; the refit uses every label
    assert rnd["new_samples"] == 2 * 8 and rnd["samples"] == 2 * 2 * 8
    assert 0.0 <= rnd["student_agreement"] <= 1.0
    # the round starts after the first PPO phase, and PPO runs again after it
    assert rnd["steps_before"] >= 128 and run["steps"] >= 256
    assert np.isfinite(rnd["eval_mean_reward"])
    state = json.loads((tmp_path / "checkpoint" / "state.json").read_text())
    assert state["phase"] == 2 and state["steps"] == run["steps"]
    demos = Demonstrations.load(tmp_path / "checkpoint" / "demos.npz")
    assert len(demos) == 2 * 2 * 8 and demos.masks[np.arange(len(demos)), demos.actions].all()


def test_an_interrupted_expert_iteration_run_resumes_where_it_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = _cfg(
        total_steps=256, imitation_policy="greedy_eft", imitation_episodes=2,
        imitation_epochs=1, expert_iterations=1,
    )  # fmt: skip

    def stop(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(trainer_mod, "_expert_round", stop)
        with pytest.raises(KeyboardInterrupt):
            train(cfg, tmp_path, progress=False)
    state = json.loads((tmp_path / "checkpoint" / "state.json").read_text())
    assert state["phase"] == 1 and not state["round_done"] and state["steps"] == 128
    assert not (tmp_path / "run.json").exists()
    train(cfg, tmp_path, progress=False, resume=True)
    run = _run(tmp_path)
    assert run["resumed"] and run["steps"] == 256
    (rnd,) = run["expert_rounds"]
    assert rnd["steps_before"] == 128  # the first phase was not run again
    assert rnd["samples"] == 2 * 8 + 2 * 8  # the warm start's labels came from the checkpoint


def test_an_on_policy_checkpoint_falls_on_a_rollout_boundary_so_a_resume_ends_on_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checkpoints every 100 steps with rollouts of 64: the first is taken at step 128, the
    start of a rollout, and the resumed run ends on the uninterrupted run's 256 steps (from
    a checkpoint at step 100 it would have run 100 + 3 x 64 = 292)."""
    cfg = _cfg(total_steps=256, checkpoint_freq=100, eval_freq=0)
    save = trainer_mod.CheckpointEvery._boundary

    def save_then_stop(self: Any) -> None:
        before = self._next
        save(self)
        if before is not None and self._next != before:  # a checkpoint was just written
            raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(trainer_mod.CheckpointEvery, "_boundary", save_then_stop)
        with pytest.raises(KeyboardInterrupt):
            train(cfg, tmp_path, progress=False)
    assert json.loads((tmp_path / "checkpoint" / "state.json").read_text())["steps"] == 128
    train(cfg, tmp_path, progress=False, resume=True)
    assert _run(tmp_path)["steps"] == 256


def test_max_seconds_stops_at_a_rollout_boundary_with_a_checkpoint_a_resume_finishes(
    tmp_path: Path,
) -> None:
    """``max_seconds`` 0: the run stops at the start of its second rollout (one update per
    sitting), unfinished, with a checkpoint there and no run record; a resume ends on the
    uninterrupted run's 256 steps."""
    cfg = _cfg(total_steps=256, checkpoint_freq=0)
    res = train(cfg, tmp_path, progress=False, max_seconds=0)
    assert not res.finished and res.steps == 64
    assert json.loads((tmp_path / "checkpoint" / "state.json").read_text())["steps"] == 64
    assert not (tmp_path / "run.json").exists()
    res = train(cfg, tmp_path, progress=False, resume=True, max_seconds=3600)
    assert res.finished and res.steps == 256 and _run(tmp_path)["steps"] == 256
    with pytest.raises(ConfigError, match="max_seconds"):
        train(cfg, tmp_path / "b", progress=False, max_seconds=-1)


def test_max_seconds_stops_an_off_policy_run_after_a_step_with_a_checkpoint(
    tmp_path: Path,
) -> None:
    """Masked DQN has no rollouts: ``max_seconds`` 0 stops it at its second step (one env
    step per call with one env), unfinished, and a resume finishes the budget."""
    cfg = _cfg(algo="masked_dqn", total_steps=128, checkpoint_freq=0, eval_freq=0,
               learning_starts=32, buffer_size=500)  # fmt: skip
    res = train(cfg, tmp_path, progress=False, max_seconds=0)
    assert not res.finished and res.steps == 2
    assert json.loads((tmp_path / "checkpoint" / "state.json").read_text())["steps"] == 2
    res = train(cfg, tmp_path, progress=False, resume=True)
    assert res.finished and _run(tmp_path)["steps"] >= 128


def test_resume_can_extend_a_finished_run(tmp_path: Path) -> None:
    train(_cfg(), tmp_path, progress=False)
    best = json.loads((tmp_path / "checkpoint" / "state.json").read_text())["best_mean_reward"]
    assert _run(tmp_path)["steps"] == 128 and best is not None
    train(_cfg(total_steps=256), tmp_path, progress=False, resume=True)
    run = _run(tmp_path)
    assert run["resumed"] and run["steps"] == 256
    # the best evaluation so far carried over: the kept model is never worse than before
    assert run["best_eval_mean_reward"] >= best


def test_resume_keeps_the_observation_statistics_and_the_evaluation_log(
    tmp_path: Path,
) -> None:
    def seen(path: Path) -> float:
        with open(path, "rb") as f:
            rms = pickle.load(f).obs_rms  # one running mean per observation key
        return float(next(iter(rms.values())).count)  # observations the statistics saw

    cfg = _cfg(policy_net="mlp", normalize_obs=True)
    train(cfg, tmp_path, progress=False)
    assert seen(tmp_path / "checkpoint" / "vecnormalize.pkl") == pytest.approx(128, abs=4)
    train(_cfg(policy_net="mlp", normalize_obs=True, total_steps=256), tmp_path,
          progress=False, resume=True)  # fmt: skip
    # the resumed run went on from the saved statistics, not from fresh ones
    assert seen(tmp_path / "checkpoint" / "vecnormalize.pkl") == pytest.approx(256, abs=4)
    # and its evaluation log holds the whole run, not the resumed part alone
    with np.load(tmp_path / "eval" / "evaluations.npz") as ev:
        assert ev["timesteps"].tolist() == [64, 128, 192, 256]


def test_resume_needs_a_checkpoint(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no checkpoint to resume from"):
        train(_cfg(), tmp_path, progress=False, resume=True)


def test_init_model_starts_from_the_given_weights(tmp_path: Path) -> None:
    train(_cfg(total_steps=64, eval_freq=0, checkpoint_freq=0), tmp_path / "a", progress=False)
    # a step size of ~0: PPO leaves the weights where init_model put them
    cfg = _cfg(
        total_steps=64, eval_freq=0, checkpoint_freq=0, init_model=str(tmp_path / "a" / "final"),
        learning_rate=1e-12,
    )  # fmt: skip
    train(cfg, tmp_path / "b", progress=False)
    a = load_model("maskable_ppo", tmp_path / "a" / "final" / "model.zip").policy.state_dict()
    b = load_model("maskable_ppo", tmp_path / "b" / "final" / "model.zip").policy.state_dict()
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_allclose(a[k].numpy(), b[k].numpy(), atol=1e-6, err_msg=k)
    # without init_model the same run keeps its own fresh weights: not A's trained ones
    train(
        _cfg(total_steps=64, eval_freq=0, checkpoint_freq=0, learning_rate=1e-12),
        tmp_path / "fresh", progress=False,
    )  # fmt: skip
    f = load_model("maskable_ppo", tmp_path / "fresh" / "final" / "model.zip")
    assert not all(np.allclose(v.numpy(), a[k].numpy()) for k, v in f.policy.state_dict().items())
    with pytest.raises(ConfigError, match="a maskable_ppo model, this config trains ppo"):
        train(
            _cfg(algo="ppo", init_model=str(tmp_path / "a" / "final"), total_steps=64),
            tmp_path / "c", progress=False,
        )  # fmt: skip


def test_same_episode_evaluations_compare_models_on_the_same_episodes(tmp_path: Path) -> None:
    # a step size of ~0: the model does not change, so every evaluation of it on the same
    # episodes gives the same mean; on the eval env's continuing stream the means differ
    for same in (True, False):
        cfg = _cfg(total_steps=256, learning_rate=1e-12, eval_same_episodes=same,
                   eval_episodes=2, checkpoint_freq=0)  # fmt: skip
        train(cfg, tmp_path / str(same), progress=False)
        ev = np.load(tmp_path / str(same) / "eval" / "evaluations.npz")
        means = ev["results"].mean(axis=1)
        assert len(means) == 4
        assert (len(set(np.round(means, 9))) == 1) is same, means


def test_init_model_brings_its_observation_statistics(tmp_path: Path) -> None:
    def seen(path: Path) -> float:
        with open(path, "rb") as f:
            return float(next(iter(pickle.load(f).obs_rms.values())).count)

    train(_cfg(policy_net="mlp", normalize_obs=True, checkpoint_freq=0), tmp_path / "a",
          progress=False)  # fmt: skip
    assert seen(tmp_path / "a" / "final" / "vecnormalize.pkl") == pytest.approx(128, abs=4)
    cfg = _cfg(policy_net="mlp", normalize_obs=True, checkpoint_freq=0, total_steps=64,
               eval_freq=0, init_model=str(tmp_path / "a" / "final"))  # fmt: skip
    train(cfg, tmp_path / "b", progress=False)
    # fine-tuning went on from A's statistics (128 + 64 observations), not from fresh ones
    assert seen(tmp_path / "b" / "final" / "vecnormalize.pkl") == pytest.approx(192, abs=4)
    with pytest.raises(ConfigError, match="trained with normalised observations"):
        train(_cfg(policy_net="mlp", normalize_obs=False, total_steps=64,
                   init_model=str(tmp_path / "a" / "final")), tmp_path / "c", progress=False)


def test_the_start_is_evaluated_with_its_own_observation_statistics(tmp_path: Path) -> None:
    # A's kept model and its statistics, saved at its best evaluation, are B's start: on the same
    # episodes B's first evaluation must score exactly what A's best did. Evaluated under the
    # eval env's fresh (zero-mean, unit) statistics instead, the same weights act on other inputs
    cfg = _cfg(policy_net="mlp", normalize_obs=True, checkpoint_freq=0, eval_same_episodes=True,
               eval_episodes=2, total_steps=256)  # fmt: skip
    train(cfg, tmp_path / "a", progress=False)
    best_a = _run(tmp_path / "a")["best_eval_mean_reward"]
    cfg_b = _cfg(policy_net="mlp", normalize_obs=True, checkpoint_freq=0, eval_same_episodes=True,
                 eval_episodes=2, total_steps=64,
                 init_model=str(tmp_path / "a" / "model"))  # fmt: skip
    train(cfg_b, tmp_path / "b", progress=False)
    assert _run(tmp_path / "b")["start_eval_mean_reward"] == pytest.approx(best_a, rel=1e-9)
