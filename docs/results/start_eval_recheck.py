"""The start evaluation of fine-tunes from a model with normalised observations, measured again
after the fix of 2026-11-28 (tenth session): until then ``rlsched train`` evaluated an
``init_model`` start under the eval env's fresh observation statistics (EvalCallback syncs the
training statistics only when it runs), so ``run.json`` ``start_eval_mean_reward`` was the
start's weights acting on other inputs. The periodic evaluations were right.

For every finished run under ``runs/zoo/`` trained from ``init_model`` with ``normalize_obs``,
this plays one rollout of its own config (the same seed, hence the same evaluation episodes)
and reads the start's evaluation again; it prints the recorded and the corrected value beside
the run's best periodic evaluation, and whether the run's kept model departs from its start
(rule 1 of the LLM rounds). Nothing is trained that is kept; writes
``docs/results/start_eval_recheck.json``.

    OMP_NUM_THREADS=1 python docs/results/start_eval_recheck.py
"""

import json
import os
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import yaml
from make_zoo import ROOT

from rlsched.train import TrainConfig, train

OUT = ROOT / "docs/results/start_eval_recheck.json"


def affected() -> list[Path]:
    runs = []
    for run_json in sorted((ROOT / "runs/zoo").glob("*/seed*/run.json")):
        cfg = yaml.safe_load((run_json.parent / "config.yaml").read_text())
        if cfg.get("init_model") and cfg.get("normalize_obs"):
            runs.append(run_json.parent)
    return runs


def corrected_start(run: Path) -> float:
    cfg = TrainConfig.from_yaml(run / "config.yaml")
    one = cfg.n_envs * cfg.n_steps  # one rollout: the start is evaluated before it
    cfg = replace(cfg, total_steps=one, eval_freq=10 * one, checkpoint_freq=0, tensorboard=False)
    tmp = Path(tempfile.mkdtemp())
    try:
        train(cfg, tmp / "run", progress=False)
        return float(json.loads((tmp / "run" / "run.json").read_text())["start_eval_mean_reward"])
    finally:
        shutil.rmtree(tmp)


def best_periodic(run: Path) -> float:
    with np.load(run / "eval" / "evaluations.npz") as ev:
        return float(ev["results"].mean(axis=1).max())


def main() -> None:
    os.chdir(ROOT)  # the configs name init_model relative to the repository
    rows = {}
    print("| run | start recorded | start corrected | best periodic | departs |")
    print("|---|---|---|---|---|")
    for run in affected():
        rec = json.loads((run / "run.json").read_text())
        start = corrected_start(run)
        best = best_periodic(run)
        name = str(run.relative_to(ROOT / "runs/zoo"))
        recorded = rec["start_eval_mean_reward"]
        rows[name] = {"recorded": recorded, "corrected": start, "best_periodic": best,
                      "departs": best > start,
                      "kept_the_start": rec["best_eval_mean_reward"] == recorded}  # fmt: skip
        print(f"| {name} | {recorded:.2f} | {start:.2f} | {best:.2f} | "
              f"{best > start} |", flush=True)  # fmt: skip
    OUT.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
