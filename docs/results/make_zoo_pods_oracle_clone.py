"""Issue 13: the anchored PodRebalancing entry chosen again, over anchored models cloned from the
clairvoyant oracle (round K).

Why: on validation clusters 12, 17, 13 and 15 the oracle searching only the anchored moves does
as well as with its wider set (``pods_oracle_anchor.py``), so the moves that close the headroom
are among the 9 the entry scores; the entry picks them on some clusters and not on others. Every
anchored model so far was cloned from greedy_migration, then trained with PPO.
``configs/pod_rebalancing_anchored_oracle_clone.yaml`` clones the oracle instead (on the
training cluster, where it reads the true future; the student sees only its observation, the
history features among it), with one DAgger round, then 30k PPO steps (half the entry's, for
this session's time). Seeds 0-1.

    docs/results/train_seeds.sh configs/pod_rebalancing_anchored_oracle_clone.yaml \\
        runs/zoo/pods_anchored_oracle_clone 0 &
    docs/results/train_seeds.sh configs/pod_rebalancing_anchored_oracle_clone.yaml \\
        runs/zoo/pods_anchored_oracle_clone 1
    python docs/results/make_zoo_pods_oracle_clone.py

The rule, fixed here before any of these models was trained:

- The rule of ``make_zoo_pods_many.py`` on fresh validation episodes: clusters 1 and 10-17, 20
  episodes each, seeds 30,000-30,019, violations divided by greedy_migration's cluster mean,
  the 180 episodes pooled. Candidates: every finished seed's kept model (its best periodic
  evaluation on cluster 1), playing with ``history_features``; the entry with its card's env
  arguments.
- The eligible candidate (not significantly worse than greedy_migration) with the lowest mean
  replaces the entry only when it is significantly better than the entry.
- On a replacement the new entry takes a test on 30 fresh test episodes, seeds 9000-9029
  (``confirm_test.py pod-rebalancing-anchored-ppo --seed 9000``), and the replaced model plays
  the same episodes (``confirm_vs_replaced.py``; recorded, not used to choose); otherwise
  nothing is tested.

Writes ``docs/results/pods_anchored_oracle_clone_choice.json`` and, on a replacement, the entry
and its card.
"""

from dataclasses import replace

from make_zoo_pods_history import CHOICE as HISTORY
from make_zoo_pods_many import anchored_fields, judge

CHOICE = replace(
    HISTORY,
    pool=("pods_anchored_oracle_clone",),
    results="pods_anchored_oracle_clone_choice",
    script="docs/results/make_zoo_pods_oracle_clone.py",
    card_fields=anchored_fields(
        "synthetic:pods cluster 0, preset today, with history_features; cloned from the "
        "clairvoyant oracle over greedy_migration (one DAgger round), then PPO"
    ),
)
SEED = 30_000

if __name__ == "__main__":
    judge(CHOICE, SEED)
