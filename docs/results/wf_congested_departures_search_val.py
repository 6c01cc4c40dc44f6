"""Issue 13, round C1, descriptive (nothing chosen on it, run after the round): the search
the round distilled (``rollout:peft?horizon=end&futures=2&top_k=4``) on the round's 40
validation episodes (the split's validation set, epigenomics, seeds 40,000-40,039), beside
HEFT and PEFT, paired. Round C1's policy was about 20% faster than PEFT there and worse on
the test families: is the search's own gain as large there?

    python docs/results/wf_congested_departures_search_val.py   # a few minutes, two processes

Writes ``docs/results/wf_congested_departures_search_val.json``.
"""

import json
import statistics
import time
from multiprocessing import Pool

from make_zoo import ROOT, paired_rows
from make_zoo_wf_congested_departures import VAL_EPISODES, VAL_SEED, env_kwargs
from wf_congested_search import SEARCH, half

from rlsched.splits import SPLITS

ENV = "rlsched/WorkflowOffloading-v0"
OUT = ROOT / "docs/results/wf_congested_departures_search_val.json"


def main() -> None:
    t0 = time.time()
    h = VAL_EPISODES // 2
    with Pool(2) as pool:
        a, b = pool.starmap(half, [(VAL_SEED, env_kwargs(), h, SPLITS[ENV].validation),
                                   (VAL_SEED + h, env_kwargs(), VAL_EPISODES - h,
                                    SPLITS[ENV].validation)])  # fmt: skip
    values = {k: a[k] + b[k] for k in a}
    out: dict = {"dataset": SPLITS[ENV].validation,
                 "seeds": [VAL_SEED, VAL_SEED + VAL_EPISODES - 1],
                 "means": {k: statistics.fmean(v) for k, v in values.items()}}  # fmt: skip
    for x, y, p in paired_rows(values, [(SEARCH, "heft"), (SEARCH, "peft")], "mean_completion",
                               " s"):  # fmt: skip
        out[f"{x} vs {y}"] = p
    out["episode_values"] = values
    out["seconds"] = round(time.time() - t0)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"means {out['means']}; {out['seconds']} s")


if __name__ == "__main__":
    main()
