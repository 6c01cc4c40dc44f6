"""Issue 13: the anchored PodRebalancing entry chosen again, over anchored models trained on
eight clusters with the typical day's load as features (round I).

Why: the entry since 2026-11-29 (round G: ``history_features``, gamma 0.97) was trained on
cluster 0 alone; the one it replaced (``make_zoo_pods_many.py``: no such features, gamma 0.9)
on eight clusters at once. On a single training cluster each node's day load is nearly a
constant of that cluster, so the network cannot learn how it varies between clusters; on eight
it sees it vary. ``configs/pod_rebalancing_anchored_many_history.yaml`` is the eight-cluster
recipe with round G's features and gamma. (The two entries' tests on the test cluster are known
when this round is set: the eight-cluster model closed 24% [11%, 37%] of the headroom over 120
episodes, round G's model none over 60. That is why the combination is tried; nothing in the
rule below reads test data.)

    docs/results/train_seeds.sh configs/pod_rebalancing_anchored_many_history.yaml \\
        runs/zoo/pods_anchored_many_history 0 2 &
    docs/results/train_seeds.sh configs/pod_rebalancing_anchored_many_history.yaml \\
        runs/zoo/pods_anchored_many_history 1 3
    python docs/results/make_zoo_pods_many_history.py

The rule, fixed here before any of these models was trained:

- The rule of ``make_zoo_pods_many.py`` on fresh validation episodes: clusters 1 and 10-17, 20
  episodes each, seeds 27,000-27,019, violations divided by greedy_migration's cluster mean, the
  180 episodes pooled. Candidates: every finished seed's kept model (its best periodic
  evaluation on cluster 1), playing with ``history_features``; the entry plays with its card's
  env arguments (they include the same features), greedy_migration with the split's.
- The eligible candidate (not significantly worse than greedy_migration) with the lowest mean
  replaces the entry only when it is significantly better than the entry.
- On a replacement the new entry takes a test on 30 fresh test episodes, seeds 9000-9029
  (``confirm_test.py pod-rebalancing-anchored-ppo --seed 9000``), and the replaced model plays
  the same episodes (``confirm_vs_replaced.py``; recorded, not used to choose); otherwise
  nothing is tested.

Writes ``docs/results/pods_anchored_many_history_choice.json`` and, on a replacement, the
entry and its card.
"""

from dataclasses import replace

from make_zoo_pods_history import CHOICE as HISTORY
from make_zoo_pods_many import anchored_fields, judge

CHOICE = replace(
    HISTORY,
    pool=("pods_anchored_many_history",),
    results="pods_anchored_many_history_choice",
    script="docs/results/make_zoo_pods_many_history.py",
    card_fields=anchored_fields(
        "synthetic:pods clusters 0, 3, 4, 5 and 20-23 (train_datasets), preset today, "
        "with history_features"
    ),
)
SEED = 27_000

if __name__ == "__main__":
    judge(CHOICE, SEED)
