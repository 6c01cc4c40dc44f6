"""Issue 13: the search over PEFT under a decision budget, again, with PEFT's best servers.

Why: ``wf_small_search_budget.py`` (2026-12-03) was written to try "PEFT's ``K`` best servers",
but PEFT ranked no servers then (it had no ``preferences``), so for ``K`` below the six valid
servers the search tried PEFT's own server, the lowest valid one and ``K - 2`` others drawn at
random (``K=2``: PEFT's and the lowest valid; found and fixed on 2026-12-03, twenty-second
session). PEFT, HEFT and greedy_eft now rank every valid server by their own key, so
``rollout:peft?top_k=K`` tries PEFT's ``K`` best. This runs the same rule again on episodes
nothing has played, so the budget and its test say what the ranked search does.

The rule, fixed here (2026-12-03) before any of these episodes played: that of
``wf_small_search_budget.py`` (``K`` in 2, 3, 4 and 6; chosen: the smallest ``K`` not
significantly worse than ``K=6`` on validation; every ``K`` beside PEFT, HEFT and the CP-SAT
``optimal`` on test; latency of 20 validation episodes alone), on

- validation: a world nothing else played, ``synthetic:placement?workflows=200&tasks=15&seed=47``
  (seeds 20,000+; pool seeds 2-46 and 100-339 served before);
- test: 200 fresh episodes of the test set (``seed=4``, seeds 10,500-10,699; 1,000+ to 10,499
  served earlier tests).

Descriptive of a search policy, not a zoo entry.

    python docs/results/wf_small_search_ranked.py   # about 20 min on this machine's 2 cores

Writes ``docs/results/wf_small_search_ranked.json``.
"""

from make_zoo import ROOT
from wf_small_search_budget import main

if __name__ == "__main__":
    main(
        validation="synthetic:placement?workflows=200&tasks=15&seed=47",
        val_seed=20_000,
        test_seed=10_500,
        out_path=ROOT / "docs/results/wf_small_search_ranked.json",
        rule="docs/results/wf_small_search_ranked.py",
    )
