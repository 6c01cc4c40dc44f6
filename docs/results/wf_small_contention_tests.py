"""The small-DAG WorkflowOffloading entry on every test the split has had (descriptive: each
was played after the entry was chosen; nothing is chosen on it).

Round W4 (``make_zoo_wf_small_contention.py``) kept a student that reads the env's
``contention`` keys; its own test (seeds 6000+) and its card's (seeds 1000+) disagree on PEFT
(better there, no significant difference here). Round W5 (``make_zoo_wf_small_contention_more.py``)
then replaced it, and round W6 (``make_zoo_wf_small_margin.py``: a student under a margin gate
over PEFT) replaced that, and round W7 (``make_zoo_wf_small_min_gain.py``: a student of a
teacher that departs only for large gains, under the same gate) replaced that. The entry, the
ones before it (round W2's from git d75972c, round W4's from git 1031981, round W5's from git
325d0b7, round W6's from git c18cf7a), PEFT and HEFT play the seven test sets of 40 episodes
used so far (seeds 1000+, the card's; 4000+, round W2's; 5000+, W3's; 6000+, W4's; 7000+,
W5's; 8000+, W6's; 9000+, W7's) with every episode's gap to the isolated CP-SAT optimum; the
280 episodes are then pooled (the issue's goal is a mean gap within 2%).

    python docs/results/wf_small_contention_tests.py    (about 4 minutes here)

Writes ``docs/results/wf_small_contention_tests.json``.
"""

import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from make_zoo import ROOT
from make_zoo_wf_small import TEST, judge

from rlsched.stats import bootstrap_mean_ci, paired
from rlsched.zoo import ZOO_DIR, card

NAME = "workflow-small-lookahead-ppo"
SEEDS = (1000, 4000, 5000, 6000, 7000, 8000, 9000)
OUT = ROOT / "docs/results/wf_small_contention_tests.json"
#: earlier entries: the commit that holds each
BEFORE = {"w2_entry": "d75972c", "w4_entry": "1031981", "w5_entry": "325d0b7",
          "w6_entry": "c18cf7a"}


def old_entry(commit: str, into: Path) -> str:
    """The entry as of ``commit``, written from git into ``into``; its ``learned:`` spec."""
    into.mkdir()
    for f in ("model.zip", "meta.json"):
        blob = f"{commit}:src/rlsched/zoo/{NAME}/model/{f}"
        data = subprocess.run(["git", "show", blob], cwd=ROOT, capture_output=True, check=True)
        (into / f).write_bytes(data.stdout)
    return f"learned:{into}"


def main(olds: dict[str, str]) -> None:
    entry = f"learned:{ZOO_DIR / NAME / 'model'}"
    extra = dict(card(NAME)["env_kwargs"])
    players = ("peft", "heft", *olds.values(), entry)
    short = {entry: "entry", **{spec: name for name, spec in olds.items()}}
    values: dict[str, list[float]] = {p: [] for p in players}
    gaps: dict[str, list[float]] = {p: [] for p in players}
    out: dict = {"dataset": TEST, "sets": {}}
    for seed in SEEDS:
        rep, g = judge(TEST, seed, ",".join(players), extra)
        rows = {r["policy"]: r for r in rep["results"]}
        row: dict = {}
        for p in players:
            values[p] += rows[p]["episode_values"]
            gaps[p] += g[p]
            row[short.get(p, p)] = {"mean_completion": rows[p]["metrics"]["mean_completion"],
                      "gap_mean": float(np.mean(g[p]))}  # fmt: skip
        for ref in ("peft", "heft", *olds.values()):
            row[f"entry_vs_{short.get(ref, ref)}"] = paired(
                rows[entry]["episode_values"], rows[ref]["episode_values"], direction="lower",
                reference=short.get(ref, ref), metric="mean_completion").to_json()  # fmt: skip
        out["sets"][str(seed)] = row
        v = row["entry_vs_peft"]
        print(f"seeds {seed}+: gaps " + ", ".join(
            f"{short.get(p, p)} {row[short.get(p, p)]['gap_mean']:.2%}" for p in players)
            + f"; entry − peft {v['mean_diff']:+.2f} [{v['ci95'][0]:+.2f}, {v['ci95'][1]:+.2f}]"
            f" {v['wins']}/{v['ties']}/{v['losses']} {v['verdict']}", flush=True)  # fmt: skip
    pooled: dict = {}
    for p in players:
        lo, hi = bootstrap_mean_ci(np.asarray(gaps[p]))
        pooled[short.get(p, p)] = {
            "gap_mean": float(np.mean(gaps[p])), "gap_ci95": [lo, hi]}  # fmt: skip
    for ref in ("peft", "heft", *olds.values()):
        pair = paired(values[entry], values[ref], direction="lower", reference=short.get(ref, ref))
        pooled[f"entry_vs_{short.get(ref, ref)}"] = pair.to_json()
    for name, spec in olds.items():  # each earlier entry against PEFT over the same episodes
        pair = paired(values[spec], values["peft"], direction="lower", reference="peft")
        pooled[f"{name}_vs_peft"] = pair.to_json()
    out["pooled"] = pooled
    OUT.write_text(json.dumps(out, indent=2) + "\n")
    for k, v in pooled.items():
        if "gap_mean" in v:
            print(f"pooled {k}: gap {v['gap_mean']:.2%} [{v['gap_ci95'][0]:.2%}, "
                  f"{v['gap_ci95'][1]:.2%}]")  # fmt: skip
        else:
            print(f"pooled {k}: {v['mean_diff']:+.2f} [{v['ci95'][0]:+.2f}, {v['ci95'][1]:+.2f}] "
                  f"{v['wins']}/{v['ties']}/{v['losses']} {v['verdict']}")  # fmt: skip


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        main({name: old_entry(commit, Path(tmp) / name) for name, commit in BEFORE.items()})
