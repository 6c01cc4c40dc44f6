"""Run every benchmark and write docs/benchmarks.md with the measured figures.

python benchmarks/run_all.py            (what `make bench` runs)
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOC = HERE.parent / "docs" / "benchmarks.md"


RESULTS = HERE / "results"


def run(script: str, *args: str) -> dict:
    """Run one benchmark; its raw figures are kept in benchmarks/results/ beside the doc."""
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / script.replace(".py", ".json")
    if "--render-only" not in sys.argv:
        subprocess.run([sys.executable, str(HERE / script), "--json", str(out), *args], check=True)
    return json.loads(out.read_text())


SERVE_LABELS = {
    "rest_predict": "REST /predict (rlsched serve)",
    "grpc_predict": "gRPC Predict (rlsched serve)",
    "rest_score": "REST /v1/score, all N nodes in one call",
    "grpc_score": "gRPC ScoreNodes, all N nodes in one call",
    "flask_predict": "Flask + torch /predict (the note's kind of service)",
    "grpc_echo_floor": "gRPC echo server doing no work (transport floor)",
}


def serve_section(sv: dict) -> list[str]:
    m = sv["machine"]
    out = [
        "",
        "## Serving latency and throughput (loopback, Python clients)",
        "",
        f"`benchmarks/bench_serve.py`: one `rlsched serve` process (fresh policy, 2N+2 state and "
        f"actions), one Flask + torch baseline serving the same weights, and a gRPC echo server "
        f"that does no work; C client processes send requests back to back for "
        f"{sv['seconds']:.0f} s each over kept-alive connections, timing every call end to end. "
        f"Clients and servers share the 2 cores. Machine speed at the time: "
        f"{m['python_loop_1e6_ms']} ms per 10^6 Python additions.",
        "",
        "| N | clients | endpoint | p50 ms | p99 ms | requests/s |",
        "|---:|---:|---|---:|---:|---:|",
    ]
    for r in sv["rows"]:
        out.append(
            f"| {r['nodes']} | {r['clients']} | {SERVE_LABELS.get(r['kind'], r['kind'])} | "
            f"{r['p50_ms']:.3f} | {r['p99_ms']:.3f} | {r['throughput_rps']:,.0f} |"
        )
    return out


def main() -> None:
    env = run("bench_env.py")
    tr = run("bench_train.py")
    sv = run("bench_serve.py")
    m = env["machine"]
    lines = [
        "# Benchmarks",
        "",
        "Measured by `make bench` (`benchmarks/run_all.py`); this file is written by it.",
        "",
        f"- machine: {m['cpu']}, {m['cores']} cores (the env benchmark pinned to "
        f"{m['cores_used']}), "
        f"Python {m['python']}, {m['platform']}",
        f"- versions: numpy {m['numpy']}, gymnasium {m['gymnasium']}, torch {m['torch']}, "
        f"stable-baselines3 {m['stable-baselines3']}, sb3-contrib {m['sb3-contrib']}",
        f"- date: {m['date']}; git commit {m['git_commit']}",
        f"- machine speed at the time: a pure-Python loop of 10^6 additions took "
        f"{m['python_loop_1e6_ms']} ms (this VM drifts by up to 2x; compare runs by it)",
        "",
        "## Env steps per second (ServerlessPlacement-v0, first_fit, one core)",
        "",
        "Each step: the policy reads the observation and mask, the env steps; resets included. "
        "Dataset `wfinstances:all`, default env arguments (episode of 200 instances, load 0.6). "
        "Median and best of 3 runs of 3 s. `raw env` steps the env object itself; `gym.make` "
        "goes through Gymnasium's default wrappers (order enforcing, passive checker).",
        "",
        "| nodes | path | median steps/s | best steps/s | goal |",
        "|---:|---|---:|---:|---:|",
    ]
    goals = {10: 30_000, 1000: 10_000}
    for r in env["rows"]:
        g = goals.get(r["num_nodes"])
        lines.append(
            f"| {r['num_nodes']} | {'gym.make' if r['gym_make_wrappers'] else 'raw env'} | "
            f"{r['steps_per_s_median']:,.0f} | {r['steps_per_s_best']:,.0f} | "
            f"{f'{g:,}' if g else '-'} |"
        )
    lines += [
        "",
        "For scale: VMAgent's pure-Python scheduling env runs about 1,200-2,400 steps/s at "
        "N = 100 on machines like this one (figure from the project brief, not re-measured here).",
        "",
        "## Training throughput (env steps per second, whole `learn` incl. updates)",
        "",
        "One torch thread; rollout 256 steps per env, batch 256, 10 epochs; no evaluation.",
        "",
        "| algorithm | policy network | envs | steps | seconds | steps/s |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in tr["rows"]:
        lines.append(
            f"| {r['algo']} | {r['policy_net']} | {r['n_envs']} | {r['steps']} | "
            f"{r['seconds']:.1f} | {r['steps_per_s']:,.0f} |"
        )
    lines += serve_section(sv)
    DOC.parent.mkdir(parents=True, exist_ok=True)
    DOC.write_text("\n".join(lines) + "\n")
    print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
