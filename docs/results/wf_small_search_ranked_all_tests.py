"""Issue 13, descriptive (nothing chosen on it): ``wf_small_search_all_tests.py`` again, now
that the search's four candidates are PEFT's four best servers (PEFT ranks every server since
a fix on 2026-12-03; the earlier run's candidates were PEFT's own, the lowest valid one and
two drawn at random), on every test episode the small-DAG split has served: the 1,280 of that
run and the 200 of ``wf_small_search_ranked.py`` (seeds 10,500+), 1,480 in all. The search
plays with the compiled rollouts (``rlsched.envs.offloading_fast``: the same decisions as
stepping the env).

    python docs/results/wf_small_search_ranked_all_tests.py   # a few minutes on two processes

Writes ``docs/results/wf_small_search_ranked_all_tests.json``.
"""

from make_zoo import ROOT
from wf_small_search_all_tests import SETS, main

if __name__ == "__main__":
    main({**SETS, 10_500: 200}, ROOT / "docs/results/wf_small_search_ranked_all_tests.json")
