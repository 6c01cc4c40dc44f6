"""Issue 13: the PodRebalancing zoo entry ``pod-rebalancing-today-ppo``, chosen again over
models anchored to greedy_migration.

Why: the entry scores all 121 feasible moves at 4 nodes (3,961 at 100) and on 30 fresh test
episodes shows no significant difference from greedy_migration, while the search teacher,
choosing among greedy's first 8 moves, is significantly better. Imitating that teacher with
the full move set failed twice (docs/results.md, "Expert iteration on PodRebalancing"). The
anchored models pick among noop and greedy's first 8 moves only (the env argument
``candidates: 8``, which the model keeps when it acts in any env):

    docs/results/train_seeds.sh configs/pod_rebalancing_anchored.yaml runs/zoo/pods_anchored 0 1 2 3
    docs/results/train_seeds.sh configs/exit/pod_rebalancing_anchored.yaml \\
        runs/zoo/pods_anchored_exit 0 1
    python docs/results/make_zoo_pods_anchored.py

The rule, fixed here before any anchored model was judged (``make_zoo.pooled_choice``):

- candidates: every finished seed of both configs, each run's kept model (its best periodic
  evaluation); the entry and the heuristics play the same 100 validation episodes (the
  validation cluster, seeds 10,000-10,099) in the env without ``candidates`` (the entry as
  shipped, the anchored models through their anchor);
- eligible: not significantly worse than the best heuristic there (paired 95% interval on
  violations);
- the eligible candidate with the fewest mean violations replaces the entry when the entry is
  not eligible, or when the candidate is significantly better than the entry there;
- a replacement's card takes its verdicts on the card's usual 10 episodes. The test that says
  whether it holds is a third one on 30 fresh test episodes, seeds 3000-3029
  (``confirm_test.py pod-rebalancing-today-ppo --seed 3000``), also fixed here.

Writes ``docs/results/pods_anchored_choice.json`` and, on a replacement, the entry and its card.
"""

from make_zoo import Choice, pooled_choice

CHOICE = Choice(
    name="pod-rebalancing-today-ppo",
    env="rlsched/PodRebalancing-v0",
    preset="today",
    extra={},
    pool=("pods_anchored", "pods_anchored_exit"),
    metric="violations",
    unit="violations",
    results="pods_anchored_choice",
    script="docs/results/make_zoo_pods_anchored.py",
    episodes=100,
    direction="lower",
)

if __name__ == "__main__":
    pooled_choice(CHOICE)
