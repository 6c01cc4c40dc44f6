"""CP-SAT solve time and proven optimality by workflow size, on one core.

Random layered DAGs (:func:`rlsched.core.optimal.random_instance`: 3 edge servers + a
cloud, image pulls, binding edge capacities) of 5, 10, 15, 20 and 25 tasks, several seeds each.
Per instance: CP-SAT wall time, status, makespan, best bound, the HEFT-like warm start's
makespan and :func:`lower_bound`.

    python benchmarks/bench_cpsat.py [--sizes 5 10 15 20 25] [--seeds 3] [--time-limit 10]
                                     [--workers 1] [--json out.json]
"""

from __future__ import annotations

import argparse
import statistics

from common import machine, pin_one_core, write_json
from rlsched.core.optimal import lower_bound, random_instance, solve


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[5, 10, 15, 20, 25])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    if args.workers == 1:
        pin_one_core()
    runs = []
    print(f"{'tasks':>5} {'seed':>4} {'wall_s':>8} {'status':>9} {'makespan':>9} {'bound':>7} "
          f"{'heft':>7} {'lb':>7}")  # fmt: skip
    for n in args.sizes:
        for seed in range(args.seeds):
            inst = random_instance(n, seed=seed)
            r = solve(inst, time_limit=args.time_limit, workers=args.workers, seed=seed)
            row = {
                "tasks": n,
                "seed": seed,
                "wall_s": round(r.wall_s, 4),
                "status": r.status,
                "proven_optimal": r.proven_optimal,
                "makespan": r.makespan,
                "sim_makespan": round(r.sim_makespan, 9),
                "bound": r.bound,
                "heft_makespan": round(r.hint_makespan, 9),
                "lower_bound": round(lower_bound(inst), 9),
            }
            runs.append(row)
            lb = row["lower_bound"]
            print(f"{n:>5} {seed:>4} {r.wall_s:>8.3f} {r.status:>9} {r.makespan:>9.3f} "
                  f"{r.bound:>7.3f} {r.hint_makespan:>7.3f} {lb:>7.3f}")  # fmt: skip
    summary = {}
    for n in args.sizes:
        rs = [r for r in runs if r["tasks"] == n]
        summary[str(n)] = {
            "median_wall_s": round(statistics.median(r["wall_s"] for r in rs), 4),
            "max_wall_s": max(r["wall_s"] for r in rs),
            "proven": sum(r["proven_optimal"] for r in rs),
            "instances": len(rs),
        }
        s = summary[str(n)]
        print(f"n={n}: median {s['median_wall_s']:.3f} s, max {s['max_wall_s']:.3f} s, "
              f"proven optimal {s['proven']}/{s['instances']}")  # fmt: skip
    if args.json:
        out = {
            "machine": machine(),
            "time_limit": args.time_limit,
            "workers": args.workers,
            "runs": runs,
            "summary": summary,
        }
        write_json(args.json, out)


if __name__ == "__main__":
    main()
