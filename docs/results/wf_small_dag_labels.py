"""Collect, without fitting, the teacher labels that rounds W23-W25 fit on (issue 13).

Rounds W23, W24 and W25 of ``make_zoo_wf_small_dag.py`` read 96,000 episodes of labels from
three run folders: W15's (``workflow_offloading_small_dag_gain_most``, 48,000 episodes on
PEFT's states), W17's DAgger round (``..._dagger``, 24,000 episodes on the states the W15
network reaches) and W21's (``..._gain_fresh``, 24,000 episodes). Each is what ``rlsched
train`` on that config collects before its fit; this script runs only that first step
(:func:`rlsched.train.departures.collect_labels`, the same chunks, seeds and workers), so a
fresh machine gets the labels in about 50 minutes on two cores without the three fits (about
an hour more). The DAgger round's student is W15's network as shipped
(``configs/zoo/start/workflow-small-dag-gain-most``, a copy of that run's model), and its
``init_model`` is not needed to collect. Chunks already present are kept (a rerun resumes).

    python docs/results/wf_small_dag_labels.py            # all three, in order
    python docs/results/wf_small_dag_labels.py dagger     # one of them
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
from pathlib import Path

from rlsched.train.config import TrainConfig
from rlsched.train.departures import collect_labels

ROOT = Path(__file__).resolve().parents[2]
W15_MODEL = "configs/zoo/start/workflow-small-dag-gain-most"
#: run name -> overrides (relative to the repository root)
RUNS: dict[str, dict[str, object]] = {
    "gain_most": {},
    "dagger": {"departure_behaviour": W15_MODEL, "init_model": None},
    "gain_fresh": {},
}


def run_folder(name: str) -> Path:
    return ROOT / "runs" / "zoo" / f"workflow_offloading_small_dag_{name}" / "seed0"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="*", help=f"of {', '.join(RUNS)} (default: all three)")
    args = ap.parse_args()
    unknown = sorted(set(args.runs) - set(RUNS))
    if unknown:
        ap.error(f"unknown runs {unknown}; choose among {', '.join(RUNS)}")
    os.chdir(ROOT)  # the configs name earlier runs relative to the repository root
    for name in args.runs or list(RUNS):
        cfg = TrainConfig.from_yaml(ROOT / "configs" / f"workflow_offloading_small_dag_{name}.yaml")
        cfg = dataclasses.replace(cfg, **RUNS[name])  # type: ignore[arg-type]
        t0 = time.perf_counter()
        demos = collect_labels(cfg, run_folder(name), progress=True)
        print(f"{name}: {demos.episodes} episodes, {len(demos)} decisions in "
              f"{time.perf_counter() - t0:.0f} s (with earlier runs' labels it reads)")  # fmt: skip


if __name__ == "__main__":
    main()
