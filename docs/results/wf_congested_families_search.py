"""Issue 13, round C3, descriptive (nothing chosen on it, run after the round): is there a gain
to distil on the unused families? The search round C3's labels came from
(``rollout:peft?horizon=end&futures=2&top_k=4``) on the round's 30 validation episodes (three
families no run trains on, ``seed=23`` workflows, 10 episodes each from seed 63,000), beside
HEFT and PEFT, each episode's mean completion relative to PEFT's, paired.

    python docs/results/wf_congested_families_search.py   # about 10 min on two processes

Writes ``docs/results/wf_congested_families_search.json``.
"""

import json
import statistics
import time

import numpy as np
from make_zoo import ROOT, paired_rows
from make_zoo_wf_congested_families import PER_FAMILY, VAL_SEED, VALIDATION
from make_zoo_wf_congested_unseen import relative_to_peft
from wf_congested_search import POLICIES, SEARCH

from rlsched.splits import SPLITS

ENV = "rlsched/WorkflowOffloading-v0"
OUT = ROOT / "docs/results/wf_congested_families_search.json"


def main() -> None:
    t0 = time.time()
    kw = dict(SPLITS[ENV].env_kwargs)  # the observation keys change no episode (observation_args)
    others = [p for p in POLICIES if p != "peft"]
    rel, parts = relative_to_peft(VALIDATION, VAL_SEED, PER_FAMILY, others, kw)
    rel["peft"] = [0.0] * len(rel[others[0]])
    out: dict = {"families": list(VALIDATION), "seeds": VAL_SEED,
                 "means_relative_to_peft": {p: statistics.fmean(v) for p, v in rel.items()}}
    per = {d: {p: statistics.fmean(np.array(part[p]) / np.array(part["peft"]) - 1.0)
               for p in POLICIES} for d, part in zip(VALIDATION, parts, strict=True)}
    out["per_family_means_relative_to_peft"] = per
    for x, y, p in paired_rows(rel, [(SEARCH, "peft"), (SEARCH, "heft")],
                               "mean_completion relative to peft"):  # fmt: skip
        out[f"{x} vs {y}"] = p
    out["episode_values"] = {d: part for d, part in zip(VALIDATION, parts, strict=True)}
    out["seconds"] = round(time.time() - t0)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"means {out['means_relative_to_peft']}; per family {per}; {out['seconds']} s")


if __name__ == "__main__":
    main()
