"""Issue 13, descriptive (nothing chosen or shipped): the online search over PEFT on the
``congested`` preset as the split defines it (the patent's task order), with PEFT's four best
servers as its candidates and its rollouts compiled.

``wf_congested_search.py`` (2026-12-03) ran ``rollout:peft?horizon=end&futures=2&top_k=4``
when PEFT ranked no servers, so its four candidates were PEFT's own, the lowest valid server
and two drawn at random; it was significantly faster than HEFT (-3.46 s [-5.23, -1.73]) at
about 70 ms per decision. PEFT now ranks every server, so the same spec tries PEFT's four
best, and the rollouts compile in the patent's order too (``rlsched.envs.offloading_fast``:
the next task drawn from the same generator outputs; the same decisions as stepping the env).
This plays that configuration, fixed here (2026-12-03) before it ran, beside HEFT and PEFT
on the split's test data (``wfinstances:blast-43,helloworld-10``, ``congested``), 30 fresh
episodes (seeds 23,000-23,029, which no earlier run on this data played), paired.

    python docs/results/wf_congested_search_ranked.py   # under a minute on two processes

Writes ``docs/results/wf_congested_search_ranked.json``.
"""

from make_zoo import ROOT
from wf_congested_search import main

if __name__ == "__main__":
    main(23_000, {}, ROOT / "docs/results/wf_congested_search_ranked.json")
