"""CPU seconds of the demo's zoo rows with the code of two or more checkouts, one core: an
exact change's speed-up measured on what the demo's zoo stage plays, and its play checked equal.

A row is a zoo entry's own policy on its test episodes as the zoo stage plays it
(:func:`rlsched.demo.zoo_plan`, :func:`rlsched.demo._zoo_task`; fewer episodes with
``--episodes``). Each round runs every checkout once, in a fresh process importing rlsched
from that checkout (:func:`common.run_fresh`) and pinned to one core; the checkouts' order
alternates round by round, since this VM's speed drifts by up to 2x within minutes and the
paired figures (each round's ratio to the first checkout) drift less than the times. A
worker plays one warm-up episode first (the env built, compiled kernels loaded), then the
row, and returns its CPU seconds and a digest of every episode's metrics: the checkouts of
an exact change give one digest.

    git worktree add /tmp/before REV
    python benchmarks/bench_zoo_rows.py --trees /tmp/before,. --entries llm-autoscaling-slo-ppo \
        [--episodes 2] [--rounds 6] [--json F]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from common import machine, pin_one_core, run_fresh, write_json


def worker(entries: list[str], episodes: int) -> dict[str, Any]:
    """Each named entry's row in this process: CPU and wall seconds, the metrics' digest."""
    import rlsched
    from rlsched.demo import _zoo_task, staged_entries, zoo_plan

    out: dict[str, Any] = {"rlsched": str(Path(rlsched.__file__).parent)}
    for e in staged_entries():
        if e["name"] not in entries:
            continue
        task = replace(zoo_plan(e, episodes)["tasks"][-1], episodes=episodes)
        _zoo_task(replace(task, episodes=1))  # warm: env built, kernels loaded
        wall, cpu = time.perf_counter(), time.process_time()
        row = _zoo_task(task)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        digest = json.dumps(row["episode_metrics"], sort_keys=True).encode()
        out[e["name"]] = {"cpu_s": cpu, "wall_s": wall,
                          "metrics_sha1": hashlib.sha1(digest).hexdigest()}  # fmt: skip
    missing = sorted(set(entries) - set(out))
    if missing:
        raise SystemExit(f"no staged zoo entry named {missing}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", default=".", help="comma list of checkouts (the first: the base)")
    ap.add_argument("--entries", required=True, help="comma list of zoo entries")
    ap.add_argument("--episodes", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--json", default=None)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    entries = args.entries.split(",")
    pin_one_core()
    if args.worker:
        print(json.dumps(worker(entries, args.episodes)))
        return
    trees = [str(Path(t).resolve()) for t in args.trees.split(",")]
    cpu: dict[str, dict[str, list[float]]] = {e: {t: [] for t in trees} for e in entries}
    digests: dict[str, set[str]] = {e: set() for e in entries}
    for r in range(args.rounds):
        for tree in trees if r % 2 == 0 else trees[::-1]:
            got = run_fresh(__file__, ["--worker", "--entries", args.entries,
                                       "--episodes", str(args.episodes)], src=tree)  # fmt: skip
            if not got["rlsched"].startswith(tree):
                raise SystemExit(f"{tree}: rlsched was imported from {got['rlsched']}")
            for e in entries:
                cpu[e][tree].append(got[e]["cpu_s"])
                digests[e].add(got[e]["metrics_sha1"])
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    rows = {}
    for e in entries:
        base = cpu[e][trees[0]]
        rows[e] = {
            "same_play": len(digests[e]) == 1,
            "trees": {t: {"median_cpu_s": round(statistics.median(v), 3),
                          "cpu_s": [round(x, 3) for x in v],
                          "median_ratio_to_base": round(statistics.median(
                              [x / b for x, b in zip(v, base, strict=True)]), 3)}
                      for t, v in cpu[e].items()},
        }  # fmt: skip
        for t, v in rows[e]["trees"].items():
            print(f"{e}: {t}: median {v['median_cpu_s']:.3f} CPU s, paired ratio to the base "
                  f"{v['median_ratio_to_base']:.3f} ({args.rounds} rounds, {args.episodes} "
                  f"episodes)")  # fmt: skip
        print(f"{e}: the same play in every run: {rows[e]['same_play']}")
    write_json(args.json, {"machine": machine(), "episodes": args.episodes,
                           "rounds": args.rounds, "trees": trees, "rows": rows})  # fmt: skip


if __name__ == "__main__":
    main()
