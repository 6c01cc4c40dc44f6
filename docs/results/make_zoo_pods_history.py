"""Issue 13: the anchored PodRebalancing entry chosen again, over anchored models that see a
typical day of the data (``history_features``).

Why: the search teacher is significantly better than greedy_migration among the same 9 anchored
moves, but its changes were not learnable from the last window's features (docs/results.md,
"An anchored PodRebalancing entry": the refits matched 17-21% of the moves it changed). Its
sampled futures are other windows of the data's day. ``history_features: true`` gives each move
five more columns (the source's and the target's cpu excess over a typical day, before and
after the move, and its net change; docs/pod_rebalancing.md). On 15 greedy episodes of each of
three validation clusters (seeds 24,000+, a screen before this rule) a node's cpu excess in a
window correlated with its violations there (Pearson 0.71-0.74); picking the move with the
largest day-excess cut alone did not beat greedy (10 episodes each of four validation clusters,
seeds 24,500+: +11.2, -2.0, -1.9, -2.8 violations, standard errors 1.8-8.0).

    docs/results/train_seeds.sh configs/pod_rebalancing_anchored_history.yaml \\
        runs/zoo/pods_anchored_history 0 1 2
    for s in 0 1 2; do
        rlsched train --resume runs/zoo/pods_anchored_history/seed$s --steps 60000; done
    python docs/results/make_zoo_pods_history.py
    python docs/results/confirm_test.py pod-rebalancing-anchored-ppo --seed 6000

The three runs are resumed from 30k to 60k steps (added after seed 0 finished and before any
model was judged: its periodic evaluations on cluster 1 were still rising at 30k, -0.0991 at
20k, -0.0984 at 25k, -0.0946 at 30k; the entry's four seeds peaked at -0.0907 to -0.1026).

The rule, fixed here before any of these models was trained:

- The rule of ``make_zoo_pods_many.py`` on fresh validation episodes: clusters 1 and 10-17, 20
  episodes each, seeds 25,000-25,019, violations divided by greedy_migration's cluster mean, the
  180 episodes pooled. The candidates (every finished seed's kept model: its best periodic
  evaluation on cluster 1) play in the env with ``history_features``, greedy_migration and the
  entry without (the features draw nothing from the env's rng: greedy must play the same
  episodes in both, and the script checks it).
- The eligible candidate (not significantly worse than greedy_migration) with the lowest mean
  replaces the entry only when it is significantly better than the entry.
- Whatever it decides, the entry then takes a fifth test on 30 fresh test episodes of the test
  cluster, seeds 6000-6029 (the command above).

Writes ``docs/results/pods_anchored_history_choice.json`` and, on a replacement, the entry and
its card.
"""

from dataclasses import replace

from make_zoo_pods_many import CHOICE as MANY
from make_zoo_pods_many import anchored_fields, judge

CHOICE = replace(
    MANY,
    extra={"history_features": True},
    pool=("pods_anchored_history",),
    results="pods_anchored_history_choice",
    script="docs/results/make_zoo_pods_history.py",
    card_fields=anchored_fields("synthetic:pods cluster 0, preset today, with history_features"),
)
SEED = 25_000

if __name__ == "__main__":
    judge(CHOICE, SEED)
