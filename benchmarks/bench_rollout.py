"""The search teacher (``rollout``, :mod:`rlsched.policies.rollout`) against each env's best
heuristic on its test data, with its decision latency, on one core.

For every env that can sample its future (``can_resample_future``): every applicable
heuristic (category ``heuristic``: search policies such as ``mdp_rollout`` and ``optimal`` are
left out) and ``rollout`` (over the measured best heuristic, the env's ``rollout_options``)
run the same ``--episodes`` test episodes (``rlsched.splits``, seeds from 1000); the verdict is
the paired 95% interval of the env's main metric against the best heuristic (episodes: the
split's ``full`` budget of ``rlsched results`` unless ``--episodes``). The latency is the median
and mean wall time of ``act()`` over test episode 1000 (its first ``--latency-decisions``).

    python benchmarks/bench_rollout.py [--episodes N] [--envs A,B] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import rlsched  # noqa: F401
from common import decision_times, machine, pin_one_core, write_json
from rlsched.envs import ENV_IDS
from rlsched.envs.args import env_class
from rlsched.evaluate import compare, make_env
from rlsched.policies.registry import applicable_heuristics, make_policy
from rlsched.scenarios import DEFAULTS
from rlsched.splits import SPLITS, TEST_SEED

PAIRED = ("mean_diff", "ci95", "verdict", "wins", "ties", "losses")


def latency(env_id: str, base: str, decisions: int) -> dict:
    split = SPLITS[env_id]
    env = make_env(env_id, split.test, **dict(split.env_kwargs))
    pol = make_policy(f"rollout:{base}", env, seed=TEST_SEED)
    times = decision_times(env, pol, [TEST_SEED], limit=decisions)
    return {
        "decisions": len(times),
        "median_ms": statistics.median(times) * 1e3,
        "mean_ms": statistics.fmean(times) * 1e3,
        "describe": pol.describe(),
    }


def one(env_id: str, episodes: int | None, decisions: int) -> dict:
    split = SPLITS[env_id]
    episodes = episodes or split.episodes["full"]
    t0 = time.perf_counter()
    env = make_env(env_id, split.test, **dict(split.env_kwargs))
    heuristics = [
        n for n in applicable_heuristics(env)
        if getattr(make_policy(n, env, seed=0), "category", "heuristic") == "heuristic"
    ]
    rep = compare(
        env_id, split.test, [*heuristics, "rollout"], episodes=episodes, seed=TEST_SEED,
        env_kwargs=dict(split.env_kwargs),
    )  # fmt: skip
    wall = time.perf_counter() - t0
    rows = {r["policy"]: r for r in rep["results"]}
    ref, ro = rep["reference"], rows["rollout"]
    metric = rep["main_metric"]
    p = ro["paired"]
    return {
        "env": env_id,
        "dataset": split.test,
        "env_kwargs": dict(split.env_kwargs),
        "preset": getattr(env.unwrapped, "preset", None),
        "episodes": episodes,
        "metric": metric,
        "direction": rep["direction"],
        "reference": ref,
        "reference_value": rows[ref]["metrics"].get(metric, rows[ref]["mean_reward"]),
        "rollout_value": ro["metrics"].get(metric, ro["mean_reward"]),
        "paired": {k: p[k] for k in PAIRED if k in p},
        "compare_s": wall,
        "latency": latency(env_id, ref, decisions),
    }


def markdown(rows: list[dict], presets_json: str | None) -> str:
    """The table docs/results.md shows: the verdict, the share of the oracle's headroom that
    the full results run measured on the same test episodes, and the latency."""
    oracle: dict[str, dict] = {}
    if presets_json:
        with open(presets_json) as fh:
            for r in json.load(fh)["rows"]:
                oracle[f"{r['env']}:{r['preset']}"] = r
    out = [
        "| env | preset | episodes | best heuristic | rollout | Δ rollout − best [95% CI] | "
        "verdict | oracle headroom (results run) | share closed | ms per decision: median, "
        "mean (decisions timed) | horizon, futures, candidates |",
        "|---|---|---:|---|---|---|---|---|---:|---|---|",
    ]
    for r in rows:
        preset = r.get("preset") or DEFAULTS[env_class(r["env"]).__name__]
        p, lat, d = r["paired"], r["latency"], r["latency"]["describe"]
        lo, hi = p["ci95"]
        o = oracle.get(f"{r['env']}:{preset}")
        head, share = "n/a", "n/a"
        if o is not None and o["best_heuristic"]["policy"] == r["reference"]:
            h = o["headroom"]["mean_diff"]
            head = f"{h:+.4g} ({o['headroom']['gain_pct']:+.1f}%)"
            share = f"{100 * p['mean_diff'] / h:.0f}%" if h else "n/a"
        horizon = "to the end" if d["horizon"] is None else str(d["horizon"])
        out.append(
            f"| {r['env'].split('/')[-1]} | {preset} | {r['episodes']} | {r['reference']} "
            f"{r['reference_value']:.4g} | {r['rollout_value']:.4g} | {p['mean_diff']:+.4g} "
            f"[{lo:+.4g}, {hi:+.4g}] | {p['verdict']} | {head} | {share} | "
            f"{lat['median_ms']:.1f}, {lat['mean_ms']:.1f} ({lat['decisions']}) | "
            f"{horizon}, {d['futures']}, "
            f"{d['top_k']} |"
        )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--episodes", type=int, default=None)
    ap.add_argument("--latency-decisions", type=int, default=100_000,
                    help="decisions timed (default: the whole episode)")
    ap.add_argument("--latency-only", default=None, metavar="JSON",
                    help="time the decisions again for an earlier run's JSON and rewrite it")
    ap.add_argument("--envs", default="", help="comma-separated env ids (default: every env "
                    "that can sample its future)")  # fmt: skip
    ap.add_argument("--json", default=None)
    ap.add_argument("--markdown", default=None, metavar="JSON",
                    help="print the docs table of an earlier run's JSON and exit")
    ap.add_argument("--presets-json", default="../docs/results/results_presets.json",
                    help="the full results run, for the oracle's headroom")
    args = ap.parse_args()
    if args.latency_only:
        with open(args.latency_only) as fh:
            old = json.load(fh)
        pin_one_core()
        for r in old["rows"]:
            if args.envs and r["env"] not in args.envs.split(","):
                continue
            r["latency"] = latency(r["env"], r["reference"], args.latency_decisions)
            print(r["env"], f"{r['latency']['mean_ms']:.1f} ms mean", flush=True)
            old["latency_machine"] = machine()
            write_json(args.latency_only, old)
        return
    if args.markdown:
        with open(args.markdown) as fh:
            print(markdown(json.load(fh)["rows"], args.presets_json))
        return
    pin_one_core()
    envs = [e for e in args.envs.split(",") if e] or [
        e for e in ENV_IDS if env_class(e).can_resample_future()
    ]
    rows = []
    for env_id in envs:
        r = one(env_id, args.episodes, args.latency_decisions)
        lat, p = r["latency"], r["paired"]
        print(
            f"{env_id}: {r['metric']} rollout {r['rollout_value']:.4g} vs {r['reference']} "
            f"{r['reference_value']:.4g}: {p.get('mean_diff', float('nan')):+.4g} "
            f"{p.get('ci95')} {p.get('verdict')}; {lat['median_ms']:.1f} ms median per "
            f"decision ({lat['decisions']} decisions); {r['compare_s']:.0f} s",
            flush=True,
        )
        rows.append(r)
        write_json(args.json, {"machine": machine(), "rows": rows})  # after each env


if __name__ == "__main__":
    main()
