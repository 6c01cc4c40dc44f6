"""Issue 13, after round C3, descriptive (nothing chosen on it): is the search teacher's loss
to PEFT on soykb noise (the winner's curse of 2 sampled futures) or bias? The search as
round C1's labels used it, and the same with ``significance=2`` (leave PEFT's server only
when the best candidate's gain, future by future, is 2 standard errors above zero), on 10
episodes of round C3's threshold-choice soykb workflows (``seed=22``, seeds 62,000+), each
beside PEFT, on two processes.

    python docs/results/wf_congested_soykb_significance.py   # about 15 min

(On 2026-12-05 the two calls of ``main`` ran as two processes by hand; this script runs the
same calls.) Writes ``docs/results/wf_congested_soykb_significance.json``.
"""

import json
from multiprocessing import Pool

import numpy as np
from make_zoo import ROOT
from make_zoo_wf_congested_unseen import play

from rlsched.splits import SPLITS
from rlsched.stats import paired

ENV = "rlsched/WorkflowOffloading-v0"
DATA, SEED, EPISODES = "wfcommons:soykb?tasks=100&seed=22&workflows=4", 62_000, 10
SEARCH = "rollout:peft?horizon=end&futures=2&top_k=4"
GATED = SEARCH + "&significance=2"
OUT = ROOT / "docs/results/wf_congested_soykb_significance.json"


def main() -> None:
    kw = dict(SPLITS[ENV].env_kwargs)
    with Pool(2) as pool:
        jobs = [(DATA, SEED, EPISODES, ["peft", s], kw) for s in (SEARCH, GATED)]
        a, b = pool.starmap(play, jobs)
    peft = np.array(a["peft"])
    rel = {s: np.array(part[s]) / peft - 1.0 for s, part in ((SEARCH, a), (GATED, b))}
    out: dict = {"dataset": DATA, "seeds": SEED, "episodes": EPISODES, "peft": a["peft"],
                 SEARCH: a[SEARCH], GATED: b[GATED]}  # fmt: skip
    for name, x, y in [(f"{SEARCH} vs peft", rel[SEARCH], np.zeros(EPISODES)),
                       (f"{GATED} vs peft", rel[GATED], np.zeros(EPISODES)),
                       (f"{GATED} vs {SEARCH}", rel[GATED], rel[SEARCH])]:  # fmt: skip
        p = paired(x, y, direction="lower")
        out[name] = {"mean_relative": p.mean_diff, "ci95": list(p.ci95),
                     "wins_ties_losses": [p.wins, p.ties, p.losses], "verdict": p.verdict}
        print(name, out[name])
    OUT.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
