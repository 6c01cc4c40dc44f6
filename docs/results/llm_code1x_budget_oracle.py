"""Can any scaler reach the box? A cost-aware clairvoyant search on `code-1x`'s fixed test.

docs/llm_autoscaling.md left open whether any policy could meet both of the issue's LLM
readings at `code-1x`: attainment not significantly below the best heuristic's (random,
0.815, at $115 per episode) at a cost not significantly above HPA's ($16.47). No measured
policy lies in that box; the clairvoyant oracle (0.982 at $23.01) searches for attainment
alone, so it does not say what knowing the future buys at a budget. This script traces that:
the same oracle (:class:`~rlsched.policies.oracle.ClairvoyantPolicy`: the true future, every
candidate rolled out from a snapshot), scored instead by the return of a Lagrangian reward,

    per interval: -20 x (1 - attainment) x n / n_mean  -  c x cost / reference cost

(``reward_weights``: ``slo`` 0, ``slo_target`` 1.0, ``slo_penalty`` 20, ``cost`` c, no switch
or magnitude terms; summed over a rollout the first term follows the rollout's attainment,
:class:`~rlsched.envs.llm_rl.RLRewardCalculator`), at five prices of cost c. Everything was
fixed here before any test episode was played (a timing run on one conv-1x validation
episode, seed 82,460, set the budget):

- the fixed test: `code-1x` of azure-llm:code, 300 s episodes, seeds 2000-2029, the 30
  episodes the attainment entry's headroom and the no-worse goal are read on;
- the base HPA (the cost goal's reference), rollouts of 30 decisions (60 s: the env's
  rollout horizon, since instances take tens of seconds to start), candidates hold and
  +-1 or +-5 instances in one pool, plus HPA's own action;
- c in 0.5, 1, 2, 4, 8; every point is reported, none is chosen;
- HPA and random are played again on the same episodes (their attainment must match the
  recorded confirmatory run's, episode by episode), and each point is paired with them:
  attainment against random, cost against HPA (95% paired bootstrap, ``rlsched.stats``).

It is not deployable (it reads the episode's arrivals) and it is not shipped: it measures
what the box asks of a scaler. ``--costs`` and ``--seeds`` make a smaller run (a check);
finished episodes are kept in ``llm_code1x_budget_oracle.jsonl`` so a stopped run resumes.

    python docs/results/llm_code1x_budget_oracle.py [--workers 2]
    # -> docs/results/llm_code1x_budget_oracle.json
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
CONFIRM = HERE / "confirm_llm-autoscaling-hpa-threshold-residual-ppo.json"
OUT = HERE / "llm_code1x_budget_oracle.json"
PARTIAL = HERE / "llm_code1x_budget_oracle.jsonl"
DATASET, PRESET, DURATION = "azure-llm:code", "code-1x", 300.0
SEED, EPISODES = 2000, 30
COSTS = (0.5, 1.0, 2.0, 4.0, 8.0)
BASE, HORIZON, PENALTY, STEPS = "hpa", 30, 20.0, (1, 5)
#: the oracle: over HPA, 30 decisions ahead, scored by its rollouts' summed reward (in the
#: env's ``oracle_steps`` candidates: hold, +-1 or +-5 instances in one pool, and HPA's own)
ORACLE = f"clairvoyant:{BASE}?horizon={HORIZON}&score=return"
KEPT = ("slo_attainment", "cost", "mean_instances", "scale_up_actions", "scale_down_actions")


def weights(c: float) -> dict[str, float]:
    """The Lagrangian reward at price ``c`` (module docstring)."""
    return {"slo": 0.0, "cost": c, "switch": 0.0, "magnitude": 0.0, "slo_target": 1.0,
            "slo_penalty": PENALTY}  # fmt: skip


def play(policy: str, c: float | None, seed: int) -> dict[str, Any]:
    """One test episode (``seed``) of ``policy``: ``"oracle"`` at price ``c``, or a
    heuristic; the kept metrics and the seconds it took."""
    from rlsched.envs.make import make_env
    from rlsched.evaluate import evaluate
    from rlsched.policies.registry import make_policy
    from rlsched.runtime import set_torch_threads

    set_torch_threads()
    start = time.perf_counter()
    kw: dict[str, Any] = {"scenario": PRESET, "episode_duration": DURATION}
    if c is not None:  # the oracle's env: its reward is the Lagrangian, its candidates finer
        kw |= {"reward_weights": weights(c), "oracle_steps": STEPS}
    env = make_env("rlsched/LLMAutoscaling-v0", DATASET, **kw)
    spec = ORACLE if policy == "oracle" else policy
    pol = make_policy(spec, env, seed=seed)
    (ep,) = evaluate(pol, env, 1, seed)
    return {"policy": policy, "c": c, "seed": seed,
            **{m: float(ep.metrics[m]) for m in KEPT},
            "seconds": time.perf_counter() - start}  # fmt: skip


def run_episodes(
    play: Callable[..., dict[str, Any]],
    todo: list[tuple[Any, ...]],
    keys: tuple[str, ...],
    partial: Path,
    workers: int,
) -> dict[tuple[Any, ...], dict[str, Any]]:
    """Every episode of ``todo`` (``play``'s arguments, which its row's ``keys`` give back)
    played ``workers`` at a time, each row appended to ``partial`` as it finishes; the rows
    ``partial`` already holds are kept, not played again (a stopped run resumes)."""
    done: dict[tuple[Any, ...], dict[str, Any]] = {}
    if partial.exists():
        for line in partial.read_text().splitlines():
            r = json.loads(line)
            done[tuple(r[k] for k in keys)] = r
    todo = [t for t in todo if t not in done]
    with ProcessPoolExecutor(max_workers=workers) as pool, partial.open("a") as log:
        futures = [pool.submit(play, *t) for t in todo]
        for i, f in enumerate(as_completed(futures), 1):
            r = f.result()
            done[tuple(r[k] for k in keys)] = r
            log.write(json.dumps(r) + "\n")
            log.flush()
            print(f"[{i}/{len(todo)}] " + " ".join(str(r[k]) for k in keys) + ": attainment "
                  f"{r['slo_attainment']:.4f}, ${r['cost']:.2f} ({r['seconds']:.0f}s)",
                  flush=True)  # fmt: skip
    return done


def summary(rows: list[dict[str, Any]], seeds: list[int]) -> dict[str, Any]:
    """Means per point and the paired verdicts (attainment vs random, cost vs HPA)."""
    from rlsched.stats import paired

    def series(policy: str, c: float | None, m: str) -> np.ndarray:
        by = {r["seed"]: r[m] for r in rows if r["policy"] == policy and r["c"] == c}
        return np.array([by[s] for s in seeds])

    confirm = json.loads(CONFIRM.read_text())
    for h in ("hpa", "random"):  # the same episodes as the recorded test
        rec = confirm["episode_values"][h][seeds[0] - SEED : seeds[-1] - SEED + 1]
        got = series(h, None, "slo_attainment")
        assert np.allclose(got, rec, rtol=0, atol=1e-12), (h, got, rec)
    points = []
    for c in sorted({r["c"] for r in rows if r["policy"] == "oracle"}):
        att, cost = series("oracle", c, "slo_attainment"), series("oracle", c, "cost")
        a = paired(att, series("random", None, "slo_attainment"), direction="higher",
                   reference="random", metric="slo_attainment")  # fmt: skip
        k = paired(cost, series("hpa", None, "cost"), direction="lower", reference="hpa",
                   metric="cost")  # fmt: skip
        a_hpa = paired(att, series("hpa", None, "slo_attainment"), direction="higher",
                       reference="hpa", metric="slo_attainment")  # fmt: skip
        points.append({
            "c": c, "slo_attainment": float(att.mean()), "cost": float(cost.mean()),
            "mean_instances": float(series("oracle", c, "mean_instances").mean()),
            "scale_actions": float((series("oracle", c, "scale_up_actions")
                                    + series("oracle", c, "scale_down_actions")).mean()),
            "attainment_vs_random": {"diff": a.mean_diff, "ci95": list(a.ci95),
                                     "verdict": a.verdict},
            "attainment_vs_hpa": {"diff": a_hpa.mean_diff, "ci95": list(a_hpa.ci95),
                                  "verdict": a_hpa.verdict},
            "cost_vs_hpa": {"diff": k.mean_diff, "ci95": list(k.ci95), "verdict": k.verdict},
            "in_box": a.verdict != "worse" and k.verdict != "worse",
        })  # fmt: skip
    heur = {h: {"slo_attainment": float(series(h, None, "slo_attainment").mean()),
                "cost": float(series(h, None, "cost").mean())} for h in ("hpa", "random")}
    return {"points": points, "heuristics": heur}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--costs", default=",".join(str(c) for c in COSTS))
    ap.add_argument("--seeds", type=int, default=EPISODES, help="the first N test episodes")
    args = ap.parse_args()
    if args.seeds < 2:
        ap.error("--seeds: a paired interval needs at least 2 episodes")
    costs = [float(c) for c in args.costs.split(",")]
    seeds = list(range(SEED, SEED + args.seeds))
    todo: list[tuple[Any, ...]] = [("oracle", c, s) for c in costs for s in seeds]
    todo += [(h, None, s) for h in ("hpa", "random") for s in seeds]
    start = time.perf_counter()
    done = run_episodes(play, todo, ("policy", "c", "seed"), PARTIAL, args.workers)
    rows = [done[("oracle", c, s)] for c in costs for s in seeds]
    rows += [done[(h, None, s)] for h in ("hpa", "random") for s in seeds]
    out = {"dataset": DATASET, "preset": PRESET, "episode_duration": DURATION,
           "seeds": [seeds[0], seeds[-1]], "base": BASE, "horizon": HORIZON,
           "oracle": ORACLE, "oracle_steps": list(STEPS),
           "penalty": PENALTY, **summary(rows, seeds), "episodes": rows,
           "seconds": time.perf_counter() - start}  # fmt: skip
    if args.seeds == EPISODES and costs == list(COSTS):
        OUT.write_text(json.dumps(out, indent=1) + "\n")
        print(f"wrote {OUT}")
    for p in out["points"]:
        print(f"c={p['c']}: attainment {p['slo_attainment']:.3f} at ${p['cost']:.2f}; vs random "
              f"{p['attainment_vs_random']['verdict']}, cost vs HPA "
              f"{p['cost_vs_hpa']['verdict']}; in the box: {p['in_box']}")  # fmt: skip


if __name__ == "__main__":
    main()
