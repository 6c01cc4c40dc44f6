"""Issue 13: the anchored PodRebalancing entry chosen again, over a second step from the
deployable search's values (round L6): the search teacher rolling out the improved student,
as the issue's expert iteration asks.

Why: round L5 (``make_zoo_pods_search_values2.py``) fitted round L's entry to the values of
the search over it (the values alone) and replaced it: better on fresh validation episodes
(-0.040 [-0.062, -0.017] of greedy_migration's cluster mean), no significant difference from
greedy_migration on the fixed test (+3.1 violations [-5.9, +12.2]) and on its round's
(-0.1 [-7.8, +8.6]), still worse over all 280 test episodes of the test cluster (+6.5 [+3.3,
+9.9]). ``configs/pod_rebalancing_anchored_search_values_step2.yaml`` takes the next step:
round L5's recipe with the search over round L5's entry as the teacher and that entry as the
start (kept in ``configs/zoo/start/pod-rebalancing-anchored-search-values``), seed 0:

    docs/results/train_seeds.sh configs/pod_rebalancing_anchored_search_values_step2.yaml \\
        runs/zoo/pods_anchored_search_values_step2 0
    python docs/results/make_zoo_pods_search_values3.py

The rule, fixed here (2026-12-05, thirty-third session) before the model trained: round L5's,
on fresh validation seeds 45,000-45,019 of clusters 1 and 10-17 (the candidate replaces the
entry only when it is not significantly worse than greedy_migration there and significantly
better than the entry). A replacement takes a test on 30 fresh test episodes, seeds
9900-9929 (``confirm_test.py pod-rebalancing-anchored-ppo --seed 9900``), with the replaced
model on the same episodes (``confirm_vs_replaced.py``; recorded, not used to choose), is
played on the fixed test the goals table reads (seeds 9000-9029, ``--seed 9000 --tag
L6_seed9000``) and replayed on every test episode of the test cluster
(``pods_tests_replayed.py --tag L6 --also 9600 9900``); otherwise nothing is tested.

Writes ``docs/results/pods_anchored_search_values3_choice.json`` and, on a replacement, the
entry and its card.
"""

from dataclasses import replace

from make_zoo_pods_many import anchored_fields, judge
from make_zoo_pods_search_values import CHOICE as ROUND_L4

CHOICE = replace(
    ROUND_L4,
    pool=("pods_anchored_search_values_step2",),
    results="pods_anchored_search_values3_choice",
    script="docs/results/make_zoo_pods_search_values3.py",
    card_fields=anchored_fields(
        "synthetic:pods cluster 0, preset today, with history_features; one soft "
        "policy-improvement step from the clairvoyant oracle's values (round L), then two from the "
        "values alone of the deployable search over the entry of the day (sampled futures) on "
        "clusters 0, 3, 4, 5 and 20-23"
    ),
)
SEED = 45_000

if __name__ == "__main__":
    judge(CHOICE, SEED)
