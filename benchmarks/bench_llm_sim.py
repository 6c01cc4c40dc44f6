"""Speed of the LLM serving simulator (rlsched.llm) on the Azure LLM traces, on one core.

Goal (LLM autoscaling issue): the full shipped conv trace (19,366 requests, one hour) at 1x rate
in a few seconds at most. Each measured run builds an ``LLMSimulator`` with the default start
state (2 prompt DGX-H100 + 2 token DGX-A100 instances, llama2-70b) and runs it to completion;
trace loading is not timed (datasets are cached). Rows vary the trace length (the first N
seconds of conv), the rate and the trace (code).

    python benchmarks/bench_llm_sim.py [--repeats 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import time

from common import machine, pin_one_core, write_json
from rlsched.llm.simulator import LLMSimulator
from rlsched.llm.trace import load_requests

#: (label, trace, rate_scale, duration s or None)
SCENARIOS = [
    ("conv, first 5 min", "conv", 1.0, 300.0),
    ("conv, first 15 min", "conv", 1.0, 900.0),
    ("conv, first 30 min", "conv", 1.0, 1800.0),
    ("conv, full hour", "conv", 1.0, None),
    ("conv, full hour at 2x rate", "conv", 2.0, None),
    ("code, full hour", "code", 1.0, None),
]


def one_run(reqs) -> tuple[float, int, dict]:
    t0 = time.perf_counter()
    sim = LLMSimulator(reqs)
    events = sim.run()
    return time.perf_counter() - t0, events, sim.results()


def main() -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    pin_one_core()
    rows = []
    for label, trace, rate, duration in SCENARIOS:
        reqs = load_requests(trace, rate_scale=rate, duration=duration)
        runs = [one_run(reqs) for _ in range(args.repeats)]
        secs = sorted(r[0] for r in runs)
        events, res = runs[0][1], runs[0][2]
        med, best = secs[len(secs) // 2], secs[0]
        rows.append(
            {
                "scenario": label,
                "trace": trace,
                "rate_scale": rate,
                "duration": duration,
                "requests": len(reqs),
                "simulated_seconds": res["duration"],
                "events": events,
                "wall_s_median": med,
                "wall_s_best": best,
                "requests_per_s_median": len(reqs) / med,
                "events_per_s_median": events / med,
                "ttft_p50": res["ttft_p50"],
                "e2e_p99": res["e2e_p99"],
                "slo_attainment": res["slo_attainment"],
            }
        )
        print(
            f"{label:28s} {len(reqs):6d} requests {events:7d} events  median {med:6.3f} s  "
            f"best {best:6.3f} s  {len(reqs) / med:9,.0f} requests/s  {events / med:9,.0f} "
            f"events/s"
        )
    out = {
        "machine": machine(),
        "start_state": "default (2 prompt dgx-h100 + 2 token dgx-a100, TP8, llama2-70b)",
        "repeats": args.repeats,
        "goal_full_conv_s": 5.0,
        "rows": rows,
    }
    return write_json(args.json, out)


if __name__ == "__main__":
    main()
