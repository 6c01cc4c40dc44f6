"""Two exact hot-path changes, each timed against the path it replaced in the same process
(this VM's speed drifts by up to 2x within minutes, so the two sides alternate), one core.

1. LLMAutoscaling: the simulator keeps each completed request's latencies and slowdowns as it
   completes (``LLMSimulator._completed_rows``), where it computed a window's afresh at every
   call (:func:`_recomputed`, the method before, kept here as the reference). Timed per
   decision over episodes of the LLM entries' test preset, the two alternating episode by
   episode: threshold's act, ``hpa_threshold``'s act (the cost-goal entry's heuristic) and the
   env's step.
2. PodRebalancing: the window model compiled (``rlsched.core.pods_kernels.simulate_window``)
   against its numpy path (``rlsched.core.pods.COMPILED`` off): one window of the zoo entry's
   test data back to back, and the zoo entry's own row of the demo's zoo stage (its test
   episodes under its trial guard), the two paths alternating, CPU seconds.

Both give the same play to the bit (tests/llm/test_simulator.py, tests/core/test_pods_kernels.py).

    python benchmarks/bench_hot_paths.py [--episodes 8] [--rounds 3] [--json F]
"""

from __future__ import annotations

import argparse
import bisect
import contextlib
import statistics
import time
from dataclasses import replace
from typing import Any

import numpy as np

from common import machine, pin_one_core, write_json
from rlsched.core import pods as core_pods
from rlsched.core.llm.simulator import LLMSimulator
from rlsched.evaluate import make_env
from rlsched.optional import numpy_path
from rlsched.policies.registry import make_policy

LLM_DATA = ("rlsched/LLMAutoscaling-v0", "azure-llm:code")
LLM_KWARGS = {"scenario": "code-1x", "episode_duration": 300.0}
PODS_ENTRY = "pod-rebalancing-anchored-ppo"


def _recomputed(self: LLMSimulator, since: float) -> Any:
    """``LLMSimulator._window_latencies`` before the kept rows: the window computed afresh."""
    idx = self._done_idx[bisect.bisect_right(self._done_t, since) :]
    lat = self._latencies(idx)
    return idx, lat, self._slowdowns(lat, idx)


def llm_windows(episodes: int) -> dict[str, Any]:
    """Median µs per decision of each heuristic's act and the env's step, kept rows against
    recomputed windows, episode by episode alternating (``episodes`` each way)."""
    kept = LLMSimulator._window_latencies
    out: dict[str, Any] = {}
    for name in ("threshold", "hpa_threshold"):
        env = make_env(*LLM_DATA, **LLM_KWARGS)
        pol = make_policy(name, env, seed=0)
        times: dict[str, dict[str, list[float]]] = {
            way: {"act": [], "step": []} for way in ("recomputed", "kept")
        }
        try:
            for ep in range(2 * episodes):
                way = ("recomputed", "kept")[ep % 2]
                LLMSimulator._window_latencies = _recomputed if way == "recomputed" else kept
                obs, _ = env.reset(seed=ep // 2)
                pol.reset(ep // 2)
                done = False
                while not done:
                    t0 = time.perf_counter()
                    a = pol.act(obs, env.unwrapped.action_masks())
                    t1 = time.perf_counter()
                    obs, _, term, trunc, _ = env.step(a)
                    t2 = time.perf_counter()
                    times[way]["act"].append(t1 - t0)
                    times[way]["step"].append(t2 - t1)
                    done = term or trunc
        finally:
            LLMSimulator._window_latencies = kept
        out[name] = {
            way: {k: {"median_us": statistics.median(v) * 1e6, "decisions": len(v)}
                  for k, v in parts.items()}
            for way, parts in times.items()
        }  # fmt: skip
        r, k = out[name]["recomputed"], out[name]["kept"]
        print(f"{name}: act {r['act']['median_us']:.1f} -> {k['act']['median_us']:.1f} µs, "
              f"env step {r['step']['median_us']:.1f} -> {k['step']['median_us']:.1f} µs "
              f"(median over {k['act']['decisions']} decisions each way)", flush=True)  # fmt: skip
    return out


def _with_path(compiled: bool, fn: Any, *args: Any) -> Any:
    """``fn(*args)`` with the window compiled or on its numpy path."""
    with contextlib.nullcontext() if compiled else numpy_path(core_pods):
        return fn(*args)


def pods_window(rounds: int, episodes: int) -> dict[str, Any]:
    """One window back to back on each path, and the zoo entry's row, alternating."""
    from rlsched.demo import _zoo_task, staged_entries, zoo_plan

    entry = next(e for e in staged_entries() if e["name"] == PODS_ENTRY)
    plan = zoo_plan(entry, episodes)
    env = plan["env"]
    env.reset(seed=0)
    wl = env.workload
    w = env._window(5)
    reqs = core_pods.draw_requests(wl.requests[w], wl.demand_cpu[w], wl.demand_mem[w],
                                   wl.spread, np.random.default_rng(0))  # fmt: skip
    args = (env._node_of, env._rc, env._rm, env.node_cpu, env.node_mem, reqs, env.mode,
            env.slots)  # fmt: skip
    window: dict[str, list[float]] = {"numpy": [], "compiled": []}
    for _ in range(rounds):
        for way in window:
            _with_path(way == "compiled", core_pods.simulate_window, *args)  # warm
            ts = []
            for _ in range(300):
                t0 = time.perf_counter()
                _with_path(way == "compiled", core_pods.simulate_window, *args)
                ts.append(time.perf_counter() - t0)
            window[way].append(statistics.median(ts) * 1e6)
    task = replace(plan["tasks"][-1], episodes=episodes)
    _zoo_task(replace(task, episodes=1))  # the env built, the kernels loaded
    row: dict[str, list[float]] = {"numpy": [], "compiled": []}
    for r in range(rounds):
        for way in ("numpy", "compiled") if r % 2 == 0 else ("compiled", "numpy"):
            t0 = time.process_time()
            _with_path(way == "compiled", _zoo_task, task)
            row[way].append(time.process_time() - t0)
    print(f"pods window ({int(reqs.counts.sum())} requests, {env.num_nodes} nodes): "
          f"numpy {window['numpy']} µs, compiled {window['compiled']} µs (medians of 300); "
          f"the zoo row ({episodes} episodes, CPU s): numpy {row['numpy']}, compiled "
          f"{row['compiled']}", flush=True)  # fmt: skip
    return {"requests": int(reqs.counts.sum()), "nodes": int(env.num_nodes),
            "window_median_us": window, "zoo_row_cpu_s": row,
            "zoo_row_episodes": episodes}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--episodes", type=int, default=8, help="LLM episodes each way")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pods-episodes", type=int, default=4)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    pin_one_core()
    out = {"machine": machine(), "llm_windows": llm_windows(args.episodes),
           "pods_window": pods_window(args.rounds, args.pods_episodes)}  # fmt: skip
    write_json(args.json, out)


if __name__ == "__main__":
    main()
