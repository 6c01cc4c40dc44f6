"""Issue 13: the anchored PodRebalancing entry chosen again, over one soft policy-improvement
step from it (round L).

Why: every distillation so far fitted a teacher's *choices* (greedy_migration, the rollout
teacher over sampled futures, the clairvoyant oracle), and every refit lost some of the
student's own good decisions while reproducing few of the teacher's changes (rounds K and K2;
docs/results.md). The oracle's rollouts hold more than its choice: each anchored move's value
when the entry plays on after it (the entry's Q-values on the true future, paired across the
moves by that shared future). ``configs/pod_rebalancing_anchored_qvalues.yaml`` fits the
entry's logits to its own logits plus those values (``imitation_target: values``,
``imitation_values_prior: 1``): its choice moves only where a move is worth clearly more, and
where the values tie the entry keeps its preference. Seeds 0-1 (each with its own 300 oracle
episodes on the training cluster 0):

    docs/results/train_seeds.sh configs/pod_rebalancing_anchored_qvalues.yaml \\
        runs/zoo/pods_anchored_qvalues 0 &
    docs/results/train_seeds.sh configs/pod_rebalancing_anchored_qvalues.yaml \\
        runs/zoo/pods_anchored_qvalues 1
    python docs/results/make_zoo_pods_qvalues.py

The rule, fixed here before these models were trained: round K's (``make_zoo_pods_oracle_clone.py``)
on fresh validation seeds 32,000-32,019 of clusters 1 and 10-17 (violations divided by
greedy_migration's cluster mean, the 180 episodes pooled; the eligible candidate with the lowest
mean replaces the entry only when significantly better than the entry there). A replacement
takes a test on 30 fresh test episodes, seeds 9000-9029 (``confirm_test.py
pod-rebalancing-anchored-ppo --seed 9000``), with the replaced model on the same episodes
(``confirm_vs_replaced.py``; recorded, not used to choose); otherwise nothing is tested.

Writes ``docs/results/pods_anchored_qvalues_choice.json`` and, on a replacement, the entry and
its card.
"""

from dataclasses import replace

from make_zoo_pods_history import CHOICE as HISTORY
from make_zoo_pods_many import anchored_fields, judge

CHOICE = replace(
    HISTORY,
    pool=("pods_anchored_qvalues",),
    results="pods_anchored_qvalues_choice",
    script="docs/results/make_zoo_pods_qvalues.py",
    card_fields=anchored_fields(
        "synthetic:pods cluster 0, preset today, with history_features; the entry before it "
        "fitted to its own logits plus its Q-values from the clairvoyant oracle's rollouts"
    ),
)
SEED = 32_000

if __name__ == "__main__":
    judge(CHOICE, SEED)
