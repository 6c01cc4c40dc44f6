"""Issue 13, descriptive (nothing chosen or shipped): the online search over PEFT in HEFT's
own task order, with its rollouts compiled.

``wf_congested_search.py`` (2026-12-03) found ``rollout:peft?horizon=end&futures=2&top_k=4``
significantly faster than HEFT on 30 ``congested`` test episodes, at about 70 ms per decision,
in the preset's task order (the patent's: the next task drawn at random among the ready ones,
those whose image is on the last server first). Since then PEFT ranks every server, so the
search's four candidates are PEFT's four best (they were PEFT's own, the lowest valid server
and two drawn at random), and its rollouts compile where the task order is HEFT's own
(``task_order="rank"``, upward rank; ``rlsched.envs.offloading_fast``, the same decisions as
stepping the env). This plays the same configuration, fixed here (2026-12-03) before it ran,
in that order, where HEFT is exact HEFT: HEFT, PEFT and the search on the split's test data
(``wfinstances:blast-43,helloworld-10``, ``congested``), 30 fresh episodes (seeds
21,000-21,029, which no earlier run on this data played), paired.

    python docs/results/wf_congested_search_rank.py   # under a minute on two processes

Writes ``docs/results/wf_congested_search_rank.json``.
"""

from make_zoo import ROOT
from wf_congested_search import main

if __name__ == "__main__":
    main(21_000, {"task_order": "rank"}, ROOT / "docs/results/wf_congested_search_rank.json")
