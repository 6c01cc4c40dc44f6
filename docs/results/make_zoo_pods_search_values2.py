"""Issue 13: the anchored PodRebalancing entry chosen again, over larger steps from the
deployable search's values (round L5).

Why: round L4's step (``make_zoo_pods_search_values.py``: the entry's logits fitted to
themselves plus the values of the search over the entry, 7,680 states on eight training
clusters) showed no significant difference from the entry on fresh validation episodes,
-0.007 [-0.021, +0.007] of greedy_migration's cluster mean, where the search itself had been
0.062 [0.029, 0.100] ahead of the entry (``pods_search_entry_probe.py``). With the entry's own
logits weighted 1 in the targets the fitted model's top move was a highest-valued one in 51%
of those states: a small step. Here the same labels are fitted with that weight at 0.5 and at
0 (the values alone): ``configs/pod_rebalancing_anchored_search_values_prior05.yaml`` and
``..._prior0.yaml``, seed 0, whose teacher episodes are round L4's (the same seeds). The
warm start now keeps its labels (docs/agents.md), so the second run refits the first's:

    docs/results/train_seeds.sh configs/pod_rebalancing_anchored_search_values_prior0.yaml \\
        runs/zoo/pods_anchored_search_values_prior0 0
    mkdir -p runs/zoo/pods_anchored_search_values_prior05/seed0
    cp -r runs/zoo/pods_anchored_search_values_prior0/seed0/teacher \\
        runs/zoo/pods_anchored_search_values_prior05/seed0/
    docs/results/train_seeds.sh configs/pod_rebalancing_anchored_search_values_prior05.yaml \\
        runs/zoo/pods_anchored_search_values_prior05 0
    python docs/results/make_zoo_pods_search_values2.py

The rule, fixed here (2026-12-05, thirty-third session) before either model trained: round
L4's, on fresh validation seeds 44,000-44,019 of clusters 1 and 10-17, over the three fits of
these labels (weights 1, 0.5 and 0; round L4's model among them): the eligible one (not
significantly worse than greedy_migration) with the lowest mean replaces the entry only when
significantly better than the entry there (the entry as shipped, with its margin gate; the
candidates ungated, as trained). A replacement ships without a gate and takes the test round
L4 fixed (30 fresh test episodes, seeds 9600-9629, ``confirm_test.py
pod-rebalancing-anchored-ppo --seed 9600``, with the replaced model on the same episodes,
``confirm_vs_replaced.py``, recorded, not used to choose) and is played on the fixed test the
goals table reads (seeds 9000-9029, ``--seed 9000 --tag L5_seed9000``); otherwise nothing is
tested.

Writes ``docs/results/pods_anchored_search_values2_choice.json`` and, on a replacement, the
entry and its card.
"""

from dataclasses import replace

from make_zoo_pods_many import anchored_fields, judge
from make_zoo_pods_search_values import CHOICE as ROUND_L4

CHOICE = replace(
    ROUND_L4,
    pool=(
        "pods_anchored_search_values",
        "pods_anchored_search_values_prior05",
        "pods_anchored_search_values_prior0",
    ),
    results="pods_anchored_search_values2_choice",
    script="docs/results/make_zoo_pods_search_values2.py",
    card_fields=anchored_fields(
        "synthetic:pods cluster 0, preset today, with history_features; one soft "
        "policy-improvement step from the clairvoyant oracle's values (round L), then one from the "
        "values of the deployable search over the entry (sampled futures) on clusters 0, 3, "
        "4, 5 and 20-23, the entry's own logits weighted 1, 0.5 or 0 in the targets (the "
        "kept one's config names it)"
    ),
)
SEED = 44_000

if __name__ == "__main__":
    judge(CHOICE, SEED)
