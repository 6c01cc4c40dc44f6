"""Shared test settings: one torch thread, a headless matplotlib, bounded hypothesis runs."""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

from hypothesis import HealthCheck, settings

settings.register_profile(
    "rlsched", deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("rlsched")

import pytest  # noqa: E402

#: a departure model's recipe at test size (rlsched.train.departures): 12 teacher-labelled
#: episodes of 8-task workflows, validation on other workflows
TINY_DEPARTURES = {
    "env_id": "rlsched/WorkflowOffloading-v0",
    "dataset": "synthetic:placement?workflows=20&tasks=8&seed=15",
    "eval_dataset": "synthetic:placement?workflows=10&tasks=8&seed=16",
    "env_kwargs": {"reward": "makespan", "num_workflows": 1, "task_order": "rank",
                   "lookahead": True, "finish_gap": True, "optimistic_cost": True,
                   "contention": True, "dag": True},
    "algo": "departures", "total_steps": 0, "gamma": 1.0, "imitation_policy": "peft",
    "imitation_episodes": 12, "imitation_epochs": 3, "departure_min_gain": 0.0,
    "expert_teacher": {"horizon": None, "futures": 0, "top_k": 8, "prefer_base": True,
                       "score": "return", "reward": "makespan"},
    "eval_episodes": 4, "tensorboard": False,
}  # fmt: skip


def small_dag_entry() -> str:
    """The zoo's small-DAG WorkflowOffloading entry (the departure model of one workflow per
    episode; each round that replaces it renames it)."""
    from rlsched.zoo import card, names

    (name,) = [
        n for n in names()
        if card(n).get("algo") == "departures" and card(n)["env_kwargs"].get("num_workflows") == 1
    ]  # fmt: skip
    return name


@pytest.fixture(scope="session")
def departure_run(tmp_path_factory: pytest.TempPathFactory):
    """A departure model trained once per session (about 10 s): its run folder."""
    from rlsched.train import TrainConfig, train

    run = tmp_path_factory.mktemp("departures") / "run"
    train(TrainConfig.from_dict(dict(TINY_DEPARTURES)), run, progress=False)
    return run
