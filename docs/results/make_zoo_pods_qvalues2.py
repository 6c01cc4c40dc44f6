"""Issue 13: the anchored PodRebalancing entry chosen again, over a second soft
policy-improvement step with values from eight training clusters (round L2).

Why: round L's step (``make_zoo_pods_qvalues.py``), fitted on the oracle's values from the
training cluster 0 alone, was significantly better than the entry before it on the nine
validation clusters (-0.059 [-0.082, -0.035] of greedy_migration's cluster mean), and then
significantly worse than greedy_migration on its test cluster (+12.9 [+4.2, +23.1]
violations, seeds 9000-9029). A step learned from one cluster's states moved the policy where
that cluster's values pointed. ``configs/pod_rebalancing_anchored_qvalues2.yaml`` takes the
next step over the shipped entry with the values gathered on eight training clusters (0, 3,
4, 5, 20-23; 40 oracle episodes each); seeds 0-1:

    docs/results/train_seeds.sh configs/pod_rebalancing_anchored_qvalues2.yaml \\
        runs/zoo/pods_anchored_qvalues2 0 &
    docs/results/train_seeds.sh configs/pod_rebalancing_anchored_qvalues2.yaml \\
        runs/zoo/pods_anchored_qvalues2 1
    python docs/results/make_zoo_pods_qvalues2.py

The rule, fixed here before these models were trained: round L's, on fresh validation seeds
33,000-33,019 of clusters 1 and 10-17 (the eligible candidate with the lowest mean replaces the
entry only when significantly better than it there). A replacement takes a test on 30 fresh
test episodes, seeds 9100-9129 (``confirm_test.py pod-rebalancing-anchored-ppo --seed 9100``),
with the replaced model on the same episodes (``confirm_vs_replaced.py``; recorded, not used
to choose); otherwise nothing is tested.

Writes ``docs/results/pods_anchored_qvalues2_choice.json`` and, on a replacement, the entry and
its card.
"""

from dataclasses import replace

from make_zoo_pods_many import anchored_fields, judge
from make_zoo_pods_qvalues import CHOICE as ROUND_L

CHOICE = replace(
    ROUND_L,
    pool=("pods_anchored_qvalues2",),
    results="pods_anchored_qvalues2_choice",
    script="docs/results/make_zoo_pods_qvalues2.py",
    card_fields=anchored_fields(
        "synthetic:pods cluster 0, preset today, with history_features; two soft "
        "policy-improvement steps from the clairvoyant oracle's values, the second on clusters "
        "0, 3, 4, 5 and 20-23"
    ),
)
SEED = 33_000

if __name__ == "__main__":
    judge(CHOICE, SEED)
