"""Build the zoo entry `pod-rebalancing-today-ppo` from the runs docs/results.md measured
(``configs/pod_rebalancing.yaml``: greedy_migration cloned, then MaskablePPO with the
node-scoring network scoring every (pod, target) move; seeds 0-4).

The value function is zeroed in the shipped file (``export_model(critic=False)``): it reads
the embedding of every (pod, target) action row, 16 MB of weights acting never uses.

The kept seed is the one best on validation (its periodic evaluation on the validation
cluster), never on test. Its card takes the validation verdict measured here (the validation
cluster, seeds 10,000+) and the test verdict measured here (the held-out test cluster, preset
``today``, seeds 1000+), both on the env's main metric, violations.

    python docs/results/make_zoo_pods.py
"""

from make_zoo import ROOT, held_out_entry  # the ServerlessPlacement entry's

from rlsched.splits import SPLITS

ENV = "rlsched/PodRebalancing-v0"
NAME = "pod-rebalancing-today-ppo"
PRESET = "today"
RUNS = sorted(ROOT.glob("runs/results/pods/seed*"), key=lambda p: int(p.name[4:]))
EPISODES = 10


def main() -> None:
    split = SPLITS[ENV]
    kwargs = {**split.env_kwargs, "scenario": PRESET}
    held_out_entry(
        NAME, ENV, RUNS, EPISODES, kwargs, kwargs,
        f"best validation reward of the {len(RUNS)} seeds (periodic evaluation)",
        {"preset": PRESET, "trained_on": f"{split.train}, preset {PRESET}",
         "algo": "maskable_ppo", "policy_net": "node",
         "critic": "zeroed: its first layer reads every (pod, target) row's embedding, 16 MB "
                   "that acting never reads; fine-tuning from this file starts it from zero"},
        metrics=("violations", "migrations"), critic=False,
    )


if __name__ == "__main__":
    main()
