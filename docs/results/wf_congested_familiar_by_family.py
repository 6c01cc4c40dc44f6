"""Round C5's validation by family (descriptive, nothing chosen on it): each policy against
PEFT on each family's 10 episodes of ``wf_congested_familiar_choice.json`` (the record keeps
each episode's mean completion relative to PEFT's, 10 per workload in the order listed).

    python docs/results/wf_congested_familiar_by_family.py [RECORD]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rlsched.stats import paired

RECORD = Path(__file__).with_name("wf_congested_familiar_choice.json")
PER_FAMILY = 10


def by_family(record: dict) -> dict[str, dict[str, dict]]:
    """``{set: {workload: {policy: paired against PEFT}}}`` for each validation set."""
    out: dict[str, dict[str, dict]] = {}
    for name, part in record["validation"].items():
        if "workloads" not in part:
            continue
        values = part["episode_values"]
        out[name] = {}
        for i, workload in enumerate(part["workloads"]):
            rows = slice(PER_FAMILY * i, PER_FAMILY * (i + 1))
            out[name][workload] = {
                k: paired(v[rows], values["peft"][rows], direction="lower", reference="peft",
                          metric="mean completion relative to PEFT's").to_json()
                for k, v in values.items() if k != "peft"
            }  # fmt: skip
    return out


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else RECORD
    for name, workloads in by_family(json.loads(path.read_text())).items():
        print(f"validation {name}")
        for workload, rows in workloads.items():
            print(f"  {workload}")
            for k, p in rows.items():
                lo, hi = p["ci95"]
                print(f"    {k:>14} {100 * p['mean_diff']:+7.2f}% [{100 * lo:+.2f}, {100 * hi:+.2f}] "
                      f"{p['wins']}/{p['ties']}/{p['losses']} {p['verdict']}")  # fmt: skip


if __name__ == "__main__":
    main()
