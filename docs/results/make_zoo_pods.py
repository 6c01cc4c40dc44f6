"""Build the zoo entry `pod-rebalancing-today-ppo` from the runs docs/results.md measured
(``configs/pod_rebalancing.yaml``: greedy_migration cloned, then MaskablePPO with the
node-scoring network scoring every (pod, target) move; seeds 0-4).

The kept seed is the one best on validation (its periodic evaluation on the validation
cluster), never on test. Its card takes the validation verdict measured here (the validation
cluster, seeds 10,000+) and the test verdict measured here (the held-out test cluster, preset
``today``, seeds 1000+), both on the env's main metric, violations.

    python docs/results/make_zoo_pods.py
"""

from make_zoo import ROOT, select, ship, training_card  # the ServerlessPlacement entry's

from rlsched.agents.export import export_model
from rlsched.evaluate import compare
from rlsched.splits import SPLITS, TEST_SEED
from rlsched.zoo import ZOO_DIR

ENV = "rlsched/PodRebalancing-v0"
NAME = "pod-rebalancing-today-ppo"
PRESET = "today"
RUNS = sorted(ROOT.glob("runs/results/pods/seed*"), key=lambda p: int(p.name[4:]))
EPISODES = 10


def verdict(rep: dict, spec: str) -> dict:
    row = next(r for r in rep["results"] if r["policy"] == spec)
    return {"dataset": rep["dataset"], "episodes": EPISODES, "reference": rep["reference"],
            "main_metric": rep["main_metric"], "mean_reward": row["mean_reward"],
            "metrics": {k: row["metrics"][k] for k in ("violations", "migrations")
                        if k in row["metrics"]},
            "paired": row["paired"]}


def main() -> None:
    vals, run = select(RUNS)
    size = export_model(run, ZOO_DIR / NAME / "model")
    split = SPLITS[ENV]
    spec = f"learned:{ZOO_DIR / NAME / 'model'}"
    kwargs = {**split.env_kwargs, "scenario": PRESET}
    val = compare(ENV, split.validation, ["all", spec], episodes=EPISODES, seed=10_000,
                  env_kwargs=kwargs)
    test = compare(ENV, split.test, ["all", spec], episodes=EPISODES, seed=TEST_SEED,
                   env_kwargs=kwargs)
    card = {
        **training_card(
            NAME, ENV, run, vals, size,
            f"best validation reward of the {len(vals)} seeds (periodic evaluation)",
        ),
        "preset": PRESET,
        "trained_on": f"{split.train}, preset {PRESET}",
        "algo": "maskable_ppo",
        "policy_net": "node",
        "validation": {**verdict(val, spec), "seed": 10_000},
        "test": {**verdict(test, spec), "seed": TEST_SEED},
    }
    ship(card, run)


if __name__ == "__main__":
    main()
