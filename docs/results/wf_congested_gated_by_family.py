"""Issue 13, round C4, descriptive (nothing is chosen on it): round C4's threshold table by
family.

Round C4 (``make_zoo_wf_congested_gated.py``) scored each threshold of its network (labels from
the significance-gated search) and of round C3's (the same labels without the gate) by the
mean over 30 episodes of three unused families. This plays the same episodes again (the same
workflows and seeds, so the pooled means must equal the round's record) and splits them by
family: whether the departures lose on one family (soykb, where the ungated search itself lost
11.5%) or on all three.

    python docs/results/wf_congested_gated_by_family.py   (from docs/results; about 6 min)
"""

from __future__ import annotations

import json
import statistics

from make_zoo import ROOT
from make_zoo_wf_congested_families import PER_FAMILY, UNSEEN_TASKS, kwargs
from make_zoo_wf_congested_gated import CHOICE, CHOICE_SEED, OUT, RUN, UNGATED, thresholds
from make_zoo_wf_congested_unseen import relative_to_peft

RESULT = ROOT / "docs/results/wf_congested_gated_by_family.json"


def main() -> None:
    recorded = json.loads(OUT.read_text())
    nets = {"gated": thresholds(RUN), "ungated": thresholds(UNGATED)}
    nets["ungated"].pop("inf")
    specs = [s for net in nets.values() for s in net.values()]
    rel, parts = relative_to_peft(CHOICE, CHOICE_SEED, PER_FAMILY, specs, kwargs(UNSEEN_TASKS, RUN))
    names = [d.split(":")[1].split("?")[0] for d in CHOICE]
    rows = []
    for net, table in nets.items():
        for t, s in table.items():
            by = {f: statistics.fmean(rel[s][k * PER_FAMILY : (k + 1) * PER_FAMILY])
                  for k, f in enumerate(names)}  # fmt: skip
            rows.append({"network": net, "threshold": t, "mean": statistics.fmean(rel[s]),
                         "by_family": by})  # fmt: skip
            print(f"{net:8s} {float(t):+.5f}: {statistics.fmean(rel[s]):+.4%}  "
                  + "  ".join(f"{f} {v:+.3%}" for f, v in by.items()))  # fmt: skip
    old = {str(r["threshold"]): r["mean_relative_to_peft"] for r in recorded["threshold_choice"]}
    old.update({f"ungated {r['threshold']}": r["mean_relative_to_peft"]
                for r in recorded["ungated_threshold_table"]})  # fmt: skip
    again = {(str(r["threshold"]) if r["network"] == "gated" else f"ungated {r['threshold']}"):
             r["mean"] for r in rows}  # fmt: skip
    same = all(abs(again[k] - v) < 1e-12 for k, v in old.items())
    print(f"the pooled means equal round C4's record: {same}")
    peft = {f: statistics.fmean(p["peft"]) for f, p in zip(names, parts, strict=True)}
    out = {"episodes": f"{CHOICE}, {PER_FAMILY} each from seed {CHOICE_SEED}", "rows": rows,
           "equal_to_record": same, "peft_mean_completion_by_family": peft}  # fmt: skip
    RESULT.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
