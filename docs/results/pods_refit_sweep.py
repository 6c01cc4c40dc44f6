"""PodRebalancing expert iteration: which refit of one round's teacher labels helps?

``docs/results/pods_many_device.sh`` ran one round of expert iteration with 4,800 teacher
labels (``configs/exit/pod_rebalancing_today_many.yaml``); its refit (changed labels weighing
4x, 30 epochs) matched 46% of the decisions the teacher changed and scored worse on
validation than the model it started from. This refits the starting model on the same labels
(``runs/exit/pods-today-many-s0/checkpoint/demos.npz``) with other weights, epochs and step
sizes, each variant in its own process, and plays each refit, the starting model and
greedy_migration on the same validation episodes (the validation set, seeds 10,000+; never
the test set). Writes ``docs/results/pods_refit_sweep.json``.

    python docs/results/pods_refit_sweep.py [--variants W:EPOCHS:LR,...] [--workers N]
        [--device cuda]
"""

import argparse
import json
import multiprocessing
import shutil
import time
from pathlib import Path

import torch

from rlsched.agents.models import load_model
from rlsched.evaluate import compare
from rlsched.splits import SPLITS
from rlsched.stats import paired
from rlsched.train.imitation import Demonstrations, pretrain

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "runs/exit/pods-today-many-s0"
ENV = "rlsched/PodRebalancing-v0"
VAL_SEED = 10_000
DEFAULT = "1:30:0.0003,2:30:0.0003,4:30:0.0003,1:100:0.0001,2:100:0.0001,4:100:0.0001,8:100:0.0001"


def refit(variant: str, episodes: int, device: str) -> dict:
    torch.set_num_threads(1)
    w, epochs, lr = variant.split(":")
    start = RUN / "model"
    model = load_model("maskable_ppo", start / "model.zip")
    model.policy.to(device)  # the fit only: the saved model acts on the CPU
    demos = Demonstrations.load(RUN / "checkpoint" / "demos.npz")
    t = time.perf_counter()
    stats = pretrain(model.policy, demos, int(epochs), batch_size=256, lr=float(lr), seed=0,
                     progress=False, changed_weight=float(w))
    out = RUN / "refit" / f"w{w}-e{epochs}-lr{lr}"
    out.mkdir(parents=True, exist_ok=True)
    model.policy.to("cpu")
    model.save(out / "model.zip")
    shutil.copy(start / "meta.json", out / "meta.json")
    fit_s = time.perf_counter() - t
    split = SPLITS[ENV]
    spec = f"learned:{out}"
    rep = compare(ENV, split.validation, ["greedy_migration", f"learned:{start}", spec],
                  episodes=episodes, seed=VAL_SEED, env_kwargs=dict(split.env_kwargs),
                  reference="greedy_migration")
    rows = {r["policy"]: r for r in rep["results"]}
    vals = rows[spec]["episode_values"]
    return {
        "variant": variant, "changed_weight": float(w), "epochs": int(epochs), "lr": float(lr),
        "fit": stats, "fit_seconds": fit_s,
        "violations": rows[spec]["metrics"]["violations"],
        "start_violations": rows[f"learned:{start}"]["metrics"]["violations"],
        "greedy_violations": rows["greedy_migration"]["metrics"]["violations"],
        "vs_greedy": rows[spec]["paired"],
        "vs_start": paired(vals, rows[f"learned:{start}"]["episode_values"], direction="lower",
                           reference="start", metric="violations").to_json(),
    }  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--variants", default=DEFAULT)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--episodes", type=int, default=10)
    ap.add_argument("--device", default="cpu", help="where the fits run (cuda: a GPU)")
    ap.add_argument("--json", default=str(ROOT / "docs/results/pods_refit_sweep.json"))
    args = ap.parse_args()
    variants = args.variants.split(",")
    t = time.perf_counter()
    # spawn: a CUDA context does not survive fork
    ctx = multiprocessing.get_context("spawn" if args.device != "cpu" else "fork")
    out = {"run": str(RUN.relative_to(ROOT)), "episodes": args.episodes,
           "device": args.device, "seed": VAL_SEED, "dataset": SPLITS[ENV].validation,
           "variants": []}  # fmt: skip
    with ctx.Pool(min(args.workers, len(variants))) as pool:
        jobs = [(v, args.episodes, args.device) for v in variants]
        for r in pool.imap_unordered(_refit, jobs):  # written as each ends: a cut run keeps them
            out["variants"].append(r)
            out["seconds"] = time.perf_counter() - t
            Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
            p, s = r["vs_greedy"], r["vs_start"]
            print(f"{r['variant']:>16}: acc {r['fit']['accuracy']:.3f} changed "
                  f"{r['fit'].get('changed_accuracy', float('nan')):.3f} | violations "
                  f"{r['violations']:.1f} (start {r['start_violations']:.1f}, greedy "
                  f"{r['greedy_violations']:.1f}) vs greedy {p['mean_diff']:+.1f} "
                  f"[{p['ci95'][0]:+.1f}, {p['ci95'][1]:+.1f}] vs start {s['mean_diff']:+.1f} "
                  f"[{s['ci95'][0]:+.1f}, {s['ci95'][1]:+.1f}] ({r['fit_seconds']:.0f} s fit)",
                  flush=True)


def _refit(job: tuple) -> dict:
    return refit(*job)

if __name__ == "__main__":
    main()
