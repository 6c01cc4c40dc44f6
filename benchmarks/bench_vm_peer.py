"""VMPlacement-v0 and VMAgent's SchedGym side by side: env steps per second of first fit.

Both run on one core over the same trace (``tests/fixtures/fidelity/vmagent/trace_seed0.csv.gz``,
``synthetic:vm`` seed 0 in VMAgent's CSV format), from the same start events (the five the
fidelity fixture records), until each episode ends; SchedGym with its own first fit
(``env.step(-1)``), rlsched with ``compat="vmagent"`` (the same episodes, action for action)
and the first valid action of the mask. Construction (SchedGym parses the CSV with pandas) is
not timed; resets are. Median and best of 3 runs of ``--seconds`` each.

SchedGym is not a dependency: point ``--vmagent`` at a checkout of mail-ecnu/VMAgent (commit
1ffabd6 measured). Its module imports the old ``gym`` only for a base class; when ``gym`` is not
installed a stand-in base class is used (it changes nothing SchedGym's step does).

    python benchmarks/bench_vm_peer.py --vmagent PATH [--seconds 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import time
import types
from pathlib import Path

import rlsched  # noqa: F401
from common import best_of, machine, pin_one_core, write_json
from rlsched.data.huawei_vm import read_huawei_vm
from rlsched.envs.vm_placement import VMPlacementEnv

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "fidelity" / "vmagent"
SIZES = (5, 20, 50, 100)
THRESHOLD = {"fading": 32, "recovering": 10}


def load_schedgym(checkout: Path) -> type:
    try:
        import gym  # noqa: F401
    except ImportError:  # SchedGym only subclasses gym.Env and imports gym.spaces
        stub = types.ModuleType("gym")
        stub.Env = type("Env", (), {})  # type: ignore[attr-defined]
        stub.spaces = types.ModuleType("gym.spaces")  # type: ignore[attr-defined]
        sys.modules["gym"], sys.modules["gym.spaces"] = stub, stub.spaces  # type: ignore[attr-defined]
    sys.path.insert(0, str(checkout / "vmagent"))
    from schedgym.sched_env import SchedEnv  # type: ignore[import-not-found]

    return SchedEnv


def peer_rate(env: object, starts: list[int], seconds: float) -> float:
    steps, k = 0, 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        env.reset(starts[k % len(starts)])  # type: ignore[attr-defined]
        k += 1
        done = False
        while not done:
            done = env.step(-1)[3]  # type: ignore[attr-defined]
            steps += 1
    return steps / (time.perf_counter() - t0)


def rlsched_rate(env: VMPlacementEnv, starts: list[int], seconds: float) -> float:
    steps, k = 0, 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        env.reset(options={"start": starts[k % len(starts)]})
        k += 1
        done = False
        while not done:
            _, _, term, trunc, _ = env.step(int(env.action_masks().argmax()))
            done = term or trunc
            steps += 1
    return steps / (time.perf_counter() - t0)


def main() -> dict:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vmagent", type=Path, required=True, help="a mail-ecnu/VMAgent checkout")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    pin_one_core()
    SchedEnv = load_schedgym(args.vmagent)
    first = (FIXTURES / "first_fit_peer_seed0.jsonl").read_text().splitlines()[0]
    starts = [int(s) for s in json.loads(first)["starts"]]
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "trace_seed0.csv"
        csv.write_bytes(gzip.decompress((FIXTURES / "trace_seed0.csv.gz").read_bytes()))
        trace = read_huawei_vm(csv)
        rows = []
        for scenario in ("fading", "recovering"):
            for n in SIZES:
                peer = SchedEnv(
                    n, 40, 90, str(csv), allow_release=scenario == "recovering",
                    double_thr=THRESHOLD[scenario],
                )  # fmt: skip
                ours = VMPlacementEnv(n, scenario, trace, compat="vmagent")
                p_med, p_best = best_of(lambda e=peer: peer_rate(e, starts, args.seconds))
                r_med, r_best = best_of(lambda e=ours: rlsched_rate(e, starts, args.seconds))
                rows.append(
                    {
                        "scenario": scenario,
                        "num_servers": n,
                        "schedgym_steps_per_s": {"median": p_med, "best": p_best},
                        "rlsched_steps_per_s": {"median": r_med, "best": r_best},
                        "ratio_median": r_med / p_med,
                    }
                )
                print(
                    f"{scenario:10s} N={n:4d} SchedGym {p_med:9.0f} (best {p_best:9.0f})  "
                    f"rlsched {r_med:9.0f} (best {r_best:9.0f})  x{r_med / p_med:.1f}",
                    flush=True,
                )
    out = {"machine": machine(), "seconds": args.seconds, "starts": starts, "rows": rows}
    return write_json(args.json, out)


if __name__ == "__main__":
    main()
