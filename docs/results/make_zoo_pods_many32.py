"""Issue 13: the anchored PodRebalancing entry chosen again, over anchored models trained on 32
clusters at once (round J).

Why: of the anchored recipes, the one trained on eight clusters (``make_zoo_pods_many.py``, the
entry from 2026-11-28 to 2026-11-29) held best on the test cluster (24% [11%, 37%] of the
headroom over 120 episodes; the one-cluster and four-cluster models before it less), and the
validation clusters where the models lose (12 and 17) differ from every training cluster.
``configs/pod_rebalancing_anchored_many32.yaml`` is that recipe with clusters 0, 3, 4, 5 and
20-47, nothing else changed. (The tests of the earlier entries are known when this round is
set and are why this direction is tried; nothing in the rule below reads test data.)

    docs/results/train_seeds.sh configs/pod_rebalancing_anchored_many32.yaml \\
        runs/zoo/pods_anchored_many32 0 2 &
    docs/results/train_seeds.sh configs/pod_rebalancing_anchored_many32.yaml \\
        runs/zoo/pods_anchored_many32 1 3
    python docs/results/make_zoo_pods_many32.py

The rule, fixed here before any of these models was trained:

- The rule of ``make_zoo_pods_many.py`` on fresh validation episodes: clusters 1 and 10-17, 20
  episodes each, seeds 28,000-28,019, violations divided by greedy_migration's cluster mean,
  the 180 episodes pooled. Candidates: every finished seed's kept model (its best periodic
  evaluation on cluster 1); the entry plays with its card's env arguments.
- The eligible candidate (not significantly worse than greedy_migration) with the lowest mean
  replaces the entry only when it is significantly better than the entry.
- On a replacement the new entry takes a test on 30 fresh test episodes, seeds 9000-9029
  (``confirm_test.py pod-rebalancing-anchored-ppo --seed 9000``), and the replaced model plays
  the same episodes (``confirm_vs_replaced.py``; recorded, not used to choose); otherwise
  nothing is tested.

Writes ``docs/results/pods_anchored_many32_choice.json`` and, on a replacement, the entry and
its card.
"""

from dataclasses import replace

from make_zoo_pods_many import CHOICE as MANY
from make_zoo_pods_many import anchored_fields, judge

CHOICE = replace(
    MANY,
    pool=("pods_anchored_many32",),
    results="pods_anchored_many32_choice",
    script="docs/results/make_zoo_pods_many32.py",
    card_fields=anchored_fields(
        "synthetic:pods clusters 0, 3, 4, 5 and 20-47 (train_datasets), preset today"
    ),
)
SEED = 28_000

if __name__ == "__main__":
    judge(CHOICE, SEED)
