"""Issue 13: the anchored PodRebalancing entry chosen again, over a soft policy-improvement
step from the deployable search's values (round L4).

Why: rounds L and L2 fitted the entry to its Q-values from the clairvoyant oracle's rollouts,
which see the true future. Round L's step was the largest validation gain of these rounds and
is significantly worse than greedy_migration on its test cluster (+12.9 violations [+4.2,
+23.1], seeds 9000-9029), where the deployable search over greedy_migration, which samples its
futures, is better than greedy (``pods_search_tests.py``). Values a deployed policy could
have computed are the ones to step on. A look beforehand (``pods_search_entry_probe.py``,
descriptive, seeds 42,000-42,003 of the validation clusters, not used again): the search over
the shipped entry (``rollout:learned:zoo/pod-rebalancing-anchored-ppo``, the env's rollout
options) had 0.062 [0.029, 0.100] of greedy_migration's cluster mean fewer violations than the
entry, so its values have something to teach.
``configs/pod_rebalancing_anchored_search_values.yaml`` fits the entry's logits to themselves
plus those values, gathered on the eight training clusters (0, 3, 4, 5, 20-23; 40 episodes
each), round L2's recipe otherwise. One seed (the search's labels are the costly part, about
20 min on two workers):

    docs/results/train_seeds.sh configs/pod_rebalancing_anchored_search_values.yaml \\
        runs/zoo/pods_anchored_search_values 0
    python docs/results/make_zoo_pods_search_values.py

The rule, fixed here (2026-12-05, thirty-third session) before the model trained: round L's,
on fresh validation seeds 43,000-43,019 of clusters 1 and 10-17 (the candidate, ungated as it
trained, replaces the entry only when it is not significantly worse than greedy_migration
there and significantly better than the entry, which plays as shipped, with its margin
gate). A replacement ships without a gate and takes a test on 30 fresh test episodes, seeds
9600-9629 (``confirm_test.py pod-rebalancing-anchored-ppo --seed 9600``), with the replaced
model on the same episodes (``confirm_vs_replaced.py``; recorded, not used to choose), and is
played on the fixed test the goals table reads (seeds 9000-9029, ``--seed 9000 --tag
L4_seed9000``); otherwise nothing is tested.

Writes ``docs/results/pods_anchored_search_values_choice.json`` and, on a replacement, the
entry and its card.
"""

from dataclasses import replace

from make_zoo_pods_many import anchored_fields, judge
from make_zoo_pods_qvalues import CHOICE as ROUND_L

CHOICE = replace(
    ROUND_L,
    pool=("pods_anchored_search_values",),
    results="pods_anchored_search_values_choice",
    script="docs/results/make_zoo_pods_search_values.py",
    card_fields=anchored_fields(
        "synthetic:pods cluster 0, preset today, with history_features; one soft "
        "policy-improvement step from the clairvoyant oracle's values (round L), then one from the "
        "values of the deployable search over the entry (sampled futures) on clusters 0, 3, "
        "4, 5 and 20-23"
    ),
)
SEED = 43_000

if __name__ == "__main__":
    judge(CHOICE, SEED)
