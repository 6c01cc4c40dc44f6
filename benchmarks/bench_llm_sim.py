"""Speed of the LLM serving simulator (rlsched.core.llm) on the Azure LLM traces, on one core.

Goals (LLM autoscaling issue): the full shipped conv trace (19,366 requests, one hour) at 1x rate
in a few seconds at most; and at least 20,000 simulated requests per CPU-second on the conv and
code traces at about 70 requests/s with 23 prompt + 10 token instances (Splitwise's own
simulator does 121-1,100 on such runs). The last two rows are those runs: the rate scaled so the
trace averages 70 requests/s, the start state's pools set to 23 + 10. Each measured run builds
an ``LLMSimulator`` with the default start state (2 prompt DGX-H100 + 2 token DGX-A100
instances, llama2-70b; 23 + 10 for the last rows) and runs it to completion;
trace loading is not timed (datasets are cached). Rows vary the trace length (the first N
seconds of conv), the rate and the trace (code).

    python benchmarks/bench_llm_sim.py [--repeats 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import time

from common import machine, pin_one_core, write_json
from rlsched.core.llm.scaling import StartState
from rlsched.core.llm.simulator import LLMSimulator
from rlsched.data.azure_llm import load_requests

#: (label, trace, rate_scale, duration s or None, (prompt, token) instances or None)
SCENARIOS = [
    ("conv, first 5 min", "conv", 1.0, 300.0, None),
    ("conv, first 15 min", "conv", 1.0, 900.0, None),
    ("conv, first 30 min", "conv", 1.0, 1800.0, None),
    ("conv, full hour", "conv", 1.0, None, None),
    ("conv, full hour at 2x rate", "conv", 2.0, None, None),
    ("code, full hour", "code", 1.0, None, None),
    ("conv at 70 req/s, 23 prompt + 10 token", "conv", "70/s", None, (23, 10)),
    ("code at 70 req/s, 23 prompt + 10 token", "code", "70/s", None, (23, 10)),
]


def start_state(pools: tuple[int, int] | None) -> StartState:
    st = StartState.default()
    if pools is None:
        return st
    d = st.to_dict()
    d["pools"]["prompt"]["num_instances"], d["pools"]["token"]["num_instances"] = pools
    return StartState.from_dict(d)


def one_run(reqs, st: StartState) -> tuple[float, int, dict, float]:
    """(wall s, events, results, CPU s of this process)"""
    c0, t0 = time.process_time(), time.perf_counter()
    sim = LLMSimulator(reqs, st)
    events = sim.run()
    return time.perf_counter() - t0, events, sim.results(), time.process_time() - c0


def main() -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    pin_one_core()
    rows = []
    for label, trace, rate, duration, pools in SCENARIOS:
        if isinstance(rate, str):  # a target mean rate: scale the trace to it
            base = load_requests(trace)
            rate = float(rate.removesuffix("/s")) / (len(base) / float(base.arrival[-1]))
        reqs = load_requests(trace, rate_scale=rate, duration=duration)
        st = start_state(pools)
        runs = [one_run(reqs, st) for _ in range(args.repeats)]
        secs = sorted(r[0] for r in runs)
        events, res = runs[0][1], runs[0][2]
        cpu = sorted(r[3] for r in runs)[len(runs) // 2]
        med, best = secs[len(secs) // 2], secs[0]
        rows.append(
            {
                "scenario": label,
                "trace": trace,
                "rate_scale": rate,
                "duration": duration,
                "instances": list(pools) if pools else [2, 2],
                "mean_rate": len(reqs) / float(reqs.arrival[-1]),
                "requests": len(reqs),
                "simulated_seconds": res["duration"],
                "events": events,
                "wall_s_median": med,
                "wall_s_best": best,
                "requests_per_s_median": len(reqs) / med,
                "cpu_s_median": cpu,
                "requests_per_cpu_s": len(reqs) / cpu,
                "events_per_s_median": events / med,
                "ttft_p50": res["ttft_p50"],
                "e2e_p99": res["e2e_p99"],
                "slo_attainment": res["slo_attainment"],
            }
        )
        print(
            f"{label:28s} {len(reqs):6d} requests {events:7d} events  median {med:6.3f} s  "
            f"best {best:6.3f} s  {len(reqs) / med:9,.0f} requests/s  {events / med:9,.0f} "
            f"events/s  {len(reqs) / cpu:9,.0f} requests/CPU-s"
        )
    out = {
        "machine": machine(),
        "start_state": "default (2 prompt dgx-h100 + 2 token dgx-a100, TP8, llama2-70b)",
        "repeats": args.repeats,
        "goal_full_conv_s": 5.0,
        "goal_requests_per_cpu_s": 20_000,
        "rows": rows,
    }
    return write_json(args.json, out)


if __name__ == "__main__":
    main()
