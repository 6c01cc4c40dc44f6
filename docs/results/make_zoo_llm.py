"""Build the zoo entry `llm-autoscaling-slo-ppo` from the runs docs/llm_autoscaling.md measured
(``configs/llm_autoscaling_slo.yaml``, seeds 0-2, trained on the conv trace at rate scale 1-3
with ``reward_weights = SLO_CONSTRAINED``).

The kept seed is the one best on validation (its periodic evaluation on conv episodes of other
seeds), never on test. Its card takes the validation verdict measured here (the conv trace,
seeds 10,000+) and the test verdict measured here on the held-out code trace at 1x (preset
``code-1x``, seeds 1000+), both on the env's main metric, SLO attainment.

    python docs/results/make_zoo_llm.py
"""


from make_zoo import ROOT, select, ship, training_card  # the ServerlessPlacement entry's

from rlsched.agents.export import export_model
from rlsched.evaluate import compare
from rlsched.splits import SPLITS, TEST_SEED
from rlsched.zoo import ZOO_DIR

ENV = "rlsched/LLMAutoscaling-v0"
NAME = "llm-autoscaling-slo-ppo"
PRESET = "code-1x"
RUNS = [ROOT / f"runs/results/llm_slo/seed{s}" for s in (0, 1, 2)]
EPISODES = 5


def verdict(rep: dict, spec: str) -> dict:
    row = next(r for r in rep["results"] if r["policy"] == spec)
    return {"dataset": rep["dataset"], "episodes": EPISODES, "reference": rep["reference"],
            "main_metric": rep["main_metric"], "mean_reward": row["mean_reward"],
            "paired": row["paired"]}


def main() -> None:
    vals, run = select(RUNS)
    size = export_model(run, ZOO_DIR / NAME / "model")
    split = SPLITS[ENV]
    spec = f"learned:{ZOO_DIR / NAME / 'model'}"
    val = compare(ENV, split.validation, ["all", spec], episodes=EPISODES, seed=10_000,
                  env_kwargs=dict(split.env_kwargs))
    test = compare(ENV, split.test, ["all", spec], episodes=EPISODES, seed=TEST_SEED,
                   env_kwargs={**split.env_kwargs, "scenario": PRESET})
    card = {
        **training_card(
            NAME, ENV, run, vals, size,
            "best validation reward of the three seeds (periodic evaluation on conv)",
        ),
        "preset": PRESET,
        "trained_on": "azure-llm:conv at rate scale 1-3 (presets conv-1x to conv-3x), "
                      "reward_weights = SLO_CONSTRAINED",
        "algo": "ppo",
        "policy_net": "mlp",
        "validation": {**verdict(val, spec), "seed": 10_000},
        "test": {**verdict(test, spec), "seed": TEST_SEED},
    }
    ship(card, run)


if __name__ == "__main__":
    main()
