"""Build the zoo entry `llm-autoscaling-slo-ppo` from the runs docs/llm_autoscaling.md measured
(``configs/llm_autoscaling_slo.yaml``, seeds 0-2, trained on the conv trace at rate scale 1-3
with ``reward_weights = SLO_CONSTRAINED``).

The kept seed is the one best on validation (its periodic evaluation on conv episodes of other
seeds), never on test. Its card takes the validation verdict measured here (the conv trace,
seeds 10,000+) and the test verdict measured here on the held-out code trace at 1x (preset
``code-1x``, seeds 1000+), both on the env's main metric, SLO attainment.

    python docs/results/make_zoo_llm.py
"""


from make_zoo import ROOT, held_out_entry  # the ServerlessPlacement entry's

from rlsched.splits import SPLITS

ENV = "rlsched/LLMAutoscaling-v0"
NAME = "llm-autoscaling-slo-ppo"
PRESET = "code-1x"
RUNS = [ROOT / f"runs/results/llm_slo/seed{s}" for s in (0, 1, 2)]
EPISODES = 5


def main() -> None:
    kwargs = dict(SPLITS[ENV].env_kwargs)
    held_out_entry(
        NAME, ENV, RUNS, EPISODES, kwargs, {**kwargs, "scenario": PRESET},
        "best validation reward of the three seeds (periodic evaluation on conv)",
        {
            "preset": PRESET,
            "trained_on": "azure-llm:conv at rate scale 1-3 (presets conv-1x to conv-3x), "
                          "reward_weights = SLO_CONSTRAINED",
            "algo": "ppo",
            "policy_net": "mlp",
        },
    )


if __name__ == "__main__":
    main()
