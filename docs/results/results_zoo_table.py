"""The table of a run of ``docs/results/results_zoo.sh`` (``rlsched results --budget full``
with every shipped entry in its preset), from the rows it wrote: each entry against the best
heuristic measured there, the oracle's headroom over that heuristic and the share of it the
entry closes by the means (where both are better).

    python docs/results/results_zoo_table.py runs/results/zoo47   # a run's folder
    python docs/results/results_zoo_table.py --add KEY runs/results/zoo47   # and keep its rows
        in docs/results/results_zoo.json as runs KEY_<env folder>
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / "docs/results/results_zoo.json"


def cell(p: dict) -> str:
    """A paired comparison: difference [95% CI], wins/ties/losses, verdict (bold if one)."""
    lo, hi = p["ci95"]
    word = p["verdict"] if p["verdict"] == "no significant difference" else f"**{p['verdict']}**"
    return (f"{p['mean_diff']:+.4g} [{lo:+.4g}, {hi:+.4g}], {p['wins']}/{p['ties']}/"
            f"{p['losses']}, {word}")  # fmt: skip


def rows(run: dict) -> list[str]:
    out = []
    for r in run["rows"]:
        best = r["best_heuristic"]
        head = r.get("headroom") or {}
        oracle = (f"{head['mean_diff']:+.4g} ({head['gain_pct']:.1f}%), {head['verdict']}"
                  if head else "-")  # fmt: skip
        for x in r.get("learned") or []:
            p = x["paired"]
            share = "-"
            if head and p["verdict"] == "better" and head["verdict"] == "better":
                share = f"{100 * p['mean_diff'] / head['mean_diff']:.0f}%"
            name = x["policy"].removeprefix("learned:zoo/")
            out.append(f"| {r['env'].split('/')[-1]} `{r['preset']}` ({r['episodes']} episodes) "
                       f"| {best['policy']} {best['mean']:.4g} | `{name}` {x['mean']:.4g}: "
                       f"{cell(p)} | {oracle} | {share} |")  # fmt: skip
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path, help="the run's OUT folder (one results.json per env)")
    ap.add_argument("--add", metavar="KEY", help="keep the rows in results_zoo.json")
    args = ap.parse_args()
    runs = {f.parent.name: json.loads(f.read_text())
            for f in sorted(args.folder.glob("*/results.json"))}  # fmt: skip
    print("| env, preset | best heuristic | shipped entry: Δ [95% CI], wins/ties/losses, verdict "
          "| oracle's headroom | share of it closed |")
    print("|---|---|---|---|---|")
    for run in runs.values():
        for line in rows(run):
            print(line)
    for name, run in runs.items():
        print(f"{name}: {run['seconds']:.0f} s, {run['date']}, git {run['git'][:12]}")
    if args.add:
        record = json.loads(RECORD.read_text())
        for name, run in runs.items():
            record["runs"][f"{args.add}_{name}"] = run
        RECORD.write_text(json.dumps(record, indent=1) + "\n")
        print(f"kept as runs {args.add}_<env> in {RECORD.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
