"""Issue 13, the unmet "no env worse" goal in LLMAutoscaling: does any setting of the threshold
rule reach threshold's SLO attainment at no more than HPA's cost? A probe, written
(2026-12-06, forty-sixth session) before any of its runs; nothing is trained or shipped.

Why: the cost-goal entry (``llm-autoscaling-hpa-threshold-residual-ppo``) is made for HPA's
attainment at no more than HPA's cost, and plays HPA's own play on the code trace. The best
heuristic by attainment there is far above HPA (on the fixed test, seeds 2000-2029 at
``code-1x``: threshold 0.799 at $20.65 per episode, HPA 0.679 at $16.47), so the entry is
significantly worse than it, and no entry can meet both goals unless some policy reaches the
best heuristic's attainment at HPA's cost. The clairvoyant oracle reaches 0.982, at $23.01.
This probe asks the same of the threshold rule's own settings (``threshold?KEY=VALUE``,
:class:`~rlsched.policies.llm.ThresholdConfig`): at 1x it answers latency noise with two
instances at a time and holds them for a minute, and its token pool never shrinks (a TBT
slowdown is at least 1, so its P90 stays above the 0.5 of the limit that ``latency_down``
asks for: docs/llm_autoscaling.md), which is where its cost above HPA's would come from.

    python docs/results/llm_threshold_frontier.py [--workers 2]

The rule, fixed here before the runs:

1. Candidates: threshold with every combination of ``up_step`` 2 or 1, ``latency_up`` 0.9 or
   1.2, ``latency_down`` 0.5 or 0.75, ``down_stable`` 60 or 30 s, ``down_cooldown`` 60 or 30
   s and ``queue_up`` 4 or 8 (64 settings, the first the default), beside every heuristic of
   the env.
2. Validation: the split's validation trace (conv) at ``conv-1x``, ``conv-2x`` and
   ``conv-3x``, as it is and with its arrivals re-drawn as a bursty Cox process of sigma 1.0
   (``burst: 1.0``, as rounds H2-H4 validated on), 20 fresh episodes at each of the six
   (seeds 82,380-82,399). Eligible: at all six, paired 95%, not significantly below HPA on
   attainment, not significantly above HPA on cost, and not significantly below the best
   heuristic there (the highest mean attainment among the env's heuristics, the default
   threshold included) on attainment. Kept: the eligible setting with the lowest mean cost
   over HPA's (the mean over the six of its mean cost / HPA's; a tie: the earlier).
3. Test, only where a setting is kept: the code trace at ``code-1x``, ``code-2x`` and
   ``code-3x`` and conv at ``conv-1x``, ``conv-2x`` and ``conv-3x``, 30 fresh episodes each
   (seeds 92,400-92,429): the kept setting, and every heuristic, the same verdicts as in 2.
   A record of what a heuristic setting can do, for the next round's choice of anchor; the
   setting is not an entry and the goals table does not change on it.

Writes ``docs/results/llm_threshold_frontier.json``: per setting and preset the means and
verdicts, the eligible settings, the kept one and its test.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_zoo_llm_cost_trial import goal as hpa_goal
from make_zoo_llm_trial import played, vs

from rlsched.policies.llm import BASELINES
from rlsched.splits import SPLITS

ROOT = Path(__file__).resolve().parents[2]
ENV = "rlsched/LLMAutoscaling-v0"
GRID = {
    "up_step": (2, 1),
    "latency_up": (0.9, 1.2),
    "latency_down": (0.5, 0.75),
    "down_stable": (60, 30),
    "down_cooldown": (60, 30),
    "queue_up": (4, 8),
}
PRESETS = ("conv-1x", "conv-2x", "conv-3x")
VAL_SEED, VAL_EPISODES = 82_380, 20
TEST_SEED, TEST_EPISODES = 92_400, 30
BURSTY = {"burst": 1.0}
OUT = ROOT / "docs/results/llm_threshold_frontier.json"


def grid_specs(name: str, grid: dict[str, tuple]) -> list[str]:
    """Every combination of ``grid``'s values as a spec of policy ``name``, naming only the
    values that differ from each key's first (the first combination: plain ``name``)."""
    out = []
    for values in itertools.product(*grid.values()):
        changed = [f"{k}={v}" for (k, vals), v in zip(grid.items(), values, strict=True)
                   if v != vals[0]]  # fmt: skip
        out.append(name + ("?" + "&".join(changed) if changed else ""))
    return out


def candidates() -> list[str]:
    """The 64 settings as specs, the default first (its spec: plain ``threshold``)."""
    out = grid_specs("threshold", GRID)
    assert len(out) == 64 and out[0] == "threshold"
    return out


def judge(res: dict, specs: list[str]) -> dict:
    """Per preset (``res[preset][policy]``: per-episode attainment and cost), each spec's means
    and its verdicts against HPA and against the best heuristic there."""
    out: dict = {}
    for preset, p in res.items():
        best = max(BASELINES, key=lambda h: float(np.mean(p[h]["slo_attainment"])))
        rows = {}
        for s in specs:
            a, c = p[s]["slo_attainment"], p[s]["cost"]
            g = hpa_goal(p, s)  # against HPA, as round H1 reads the goal
            vs_best = vs(a, p[best]["slo_attainment"], best, "slo_attainment", "higher")
            rows[s] = {
                "slo_attainment": float(np.mean(a)), "cost": float(np.mean(c)),
                "cost_over_hpa": float(np.mean(c) / np.mean(p["hpa"]["cost"])),
                "vs_hpa": {"slo_attainment": g["slo_attainment"], "cost": g["cost"]},
                "vs_best": vs_best,
                "met": g["met"] and vs_best["verdict"] != "worse",
            }  # fmt: skip
        out[preset] = {"best_heuristic": best, "policies": rows}
    return out


def six(data: str, seed: int, n: int, players: tuple[str, ...], workers: int,
        code: bool = False) -> dict:  # fmt: skip
    """``players`` at the six presets of step 2 (bursty conv as ``PRESET+burst``) or step 3
    (``code``: the code trace's three and conv's)."""
    if code:
        res = played(SPLITS[ENV].test, ("code-1x", "code-2x", "code-3x"), seed, n,
                     {p: players for p in ("code-1x", "code-2x", "code-3x")}, workers)  # fmt: skip
        res |= played("azure-llm:conv", PRESETS, seed, n, {p: players for p in PRESETS}, workers)
        return res
    res = played(data, PRESETS, seed, n, {p: players for p in PRESETS}, workers)
    bursty = played(data, PRESETS, seed, n, {p: players for p in PRESETS}, workers, BURSTY)
    return res | {f"{p}+burst": v for p, v in bursty.items()}


def main(workers: int) -> None:
    t0 = time.perf_counter()
    specs = candidates()
    players = tuple(dict.fromkeys([*BASELINES, *specs]))
    val = judge(six(SPLITS[ENV].validation, VAL_SEED, VAL_EPISODES, players, workers), specs)
    eligible = [s for s in specs if all(val[p]["policies"][s]["met"] for p in val)]
    ratio = {s: float(np.mean([val[p]["policies"][s]["cost_over_hpa"] for p in val]))
             for s in specs}  # fmt: skip
    kept = min(eligible, key=lambda s: (ratio[s], specs.index(s))) if eligible else None
    met = {s: [p for p in val if val[p]["policies"][s]["met"]] for s in specs}
    print(f"validation: {len(eligible)} eligible of {len(specs)}; kept {kept}", flush=True)
    for s in sorted(specs, key=lambda s: (-len(met[s]), ratio[s]))[:8]:
        print(f"  {s}: met at {len(met[s])} of 6, cost {ratio[s]:.2f}x HPA's", flush=True)
    out: dict = {
        "rule": "docs/results/llm_threshold_frontier.py", "grid": GRID,
        "validation": {"dataset": SPLITS[ENV].validation, "seed": VAL_SEED,
                       "episodes_per_preset": VAL_EPISODES, "presets": val,
                       "met_at": met, "cost_over_hpa": ratio},
        "eligible": eligible, "kept": kept,
    }  # fmt: skip
    if kept is not None:
        test = judge(six("", TEST_SEED, TEST_EPISODES, tuple(dict.fromkeys([*BASELINES, kept])),
                         workers, code=True), [kept])  # fmt: skip
        out["test"] = {"seed": TEST_SEED, "episodes_per_preset": TEST_EPISODES,
                       "presets": test,
                       "met_at": [p for p in test if test[p]["policies"][kept]["met"]]}  # fmt: skip
        print(f"test: {kept} met at {out['test']['met_at']}", flush=True)
    out["seconds"] = time.perf_counter() - t0
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {OUT} in {out['seconds']:.0f} s", flush=True)


def heuristics(workers: int) -> None:
    """A record added after the run (its JSON kept the 64 settings' means, not the other
    heuristics'): every heuristic's mean attainment and cost at the six validation presets,
    and its paired verdicts against HPA on both, replayed on the same seeds (the same episodes,
    so the same numbers the verdicts read)."""
    res = six(SPLITS[ENV].validation, VAL_SEED, VAL_EPISODES, BASELINES, workers)
    out = json.loads(OUT.read_text())
    out["validation"]["heuristics"] = {
        p: {h: {"slo_attainment": float(np.mean(r[h]["slo_attainment"])),
                "cost": float(np.mean(r[h]["cost"])),
                "vs_hpa": {"slo_attainment": vs(r[h]["slo_attainment"], r["hpa"]["slo_attainment"],
                                                "hpa", "slo_attainment", "higher"),
                           "cost": vs(r[h]["cost"], r["hpa"]["cost"], "hpa", "cost", "lower")}}
            for h in BASELINES}
        for p, r in res.items()
    }  # fmt: skip
    for p, r in out["validation"]["heuristics"].items():
        assert r["threshold"]["slo_attainment"] == out["validation"]["presets"][p]["policies"][
            "threshold"]["slo_attainment"], p  # the same episodes as the run's
        print(p + ": " + "; ".join(f"{h} {v['slo_attainment']:.3f} ${v['cost']:.2f}"
                                   for h, v in r.items()), flush=True)  # fmt: skip
    OUT.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--heuristics", action="store_true",
                    help="add every heuristic's means to the run's JSON (same seeds)")
    args = ap.parse_args()
    heuristics(args.workers) if args.heuristics else main(args.workers)
