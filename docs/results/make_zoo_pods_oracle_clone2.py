"""Issue 13: round K again with the oracle's DAgger labels fixed (round K2).

Round K (``make_zoo_pods_oracle_clone.py``) cloned the clairvoyant oracle, then ran one DAgger
round in which the clone played and the oracle labelled. The oracle follows its own best
trajectory and did not know that the learner had played something else, so it labelled many
of the learner's states with the next action of a trajectory the env had left, often an action
invalid there (6 of 48 labels on two test episodes; the refit's action loss was 9.1e6). The
oracle now drops that trajectory when told another action was taken (``Policy.taken``,
``tests/train/test_imitation.py``). This round retrains the same config, seeds 0-1, from
scratch with the fix (round K's runs are kept in ``runs/zoo/pods_anchored_oracle_clone``).

    docs/results/train_seeds.sh configs/pod_rebalancing_anchored_oracle_clone.yaml \\
        runs/zoo/pods_anchored_oracle_clone2 0 &
    docs/results/train_seeds.sh configs/pod_rebalancing_anchored_oracle_clone.yaml \\
        runs/zoo/pods_anchored_oracle_clone2 1
    python docs/results/make_zoo_pods_oracle_clone2.py

The rule, fixed here before these models were trained: round K's, on fresh validation seeds
31,000-31,019 of clusters 1 and 10-17; a replacement takes a test on seeds 9000-9029 and the
replaced model plays the same episodes; otherwise nothing is tested.

Writes ``docs/results/pods_anchored_oracle_clone2_choice.json`` and, on a replacement, the
entry and its card.
"""

from dataclasses import replace

from make_zoo_pods_many import judge
from make_zoo_pods_oracle_clone import CHOICE as ROUND_K

CHOICE = replace(
    ROUND_K,
    pool=("pods_anchored_oracle_clone2",),
    results="pods_anchored_oracle_clone2_choice",
    script="docs/results/make_zoo_pods_oracle_clone2.py",
)
SEED = 31_000

if __name__ == "__main__":
    judge(CHOICE, SEED)
