"""Issue 13, descriptive (nothing chosen on it): how many distinct problems the small-DAG test
episodes hold, and the entry's gap to the optimum counted by problem, not by episode.

The test set (``synthetic:placement?workflows=30&tasks=15&seed=4``) holds 30 workflows; an
episode draws one of them and the edge server it arrives at (one of 5), and then nothing is
random: one workflow per episode is deterministic. So the 3,480 test episodes the split has
served (``wf_small_dag_gain_all_tests.py --entry workflow-small-dag-ensemble``) are draws from
at most 150 problems, and their pooled interval, which counts every episode as independent,
is too narrow for the question "on average over such workflows". This maps every one of those
episodes to its problem (workflow, origin), plays each problem once (the entry, round W18's
single network, PEFT and the search over PEFT's four best servers; the gap of each to the
isolated CP-SAT optimum), and reports:

1. the mean gap over the 3,480 draws (as the pooled figure), and its 95% interval from a
   bootstrap over the 30 *workflows* (each resampled workflow carries all its draws);
2. the mean gap over the distinct problems, each counted once;
3. the entry's gap less PEFT's and less W18's network's, the same two ways.

    python docs/results/wf_small_dag_instances.py   # about 1 min

Writes ``docs/results/wf_small_dag_instances.json``.
"""

import json
import time
from collections import Counter

import numpy as np
from make_zoo import ROOT
from make_zoo_wf_small import ENV, KWARGS, PRESET, TEST
from wf_small_dag_gain_all_tests import EXTRA, RUNS, SEARCH

from rlsched.evaluate import make_env
from rlsched.policies.registry import make_policy

ENTRY = "workflow-small-dag-ensemble"
BEFORE = "workflow-small-dag-dagger-slow"
OUT = ROOT / "docs/results/wf_small_dag_instances.json"
RESAMPLES = 10_000


def problems(env, sets: dict[int, int]) -> list[tuple[int, int, int]]:
    """Every test episode as (episode seed, workflow, origin)."""
    u = env.unwrapped
    out = []
    for first, n in sorted(sets.items()):
        for seed in range(first, first + n):
            env.reset(seed=seed)
            out.append((seed, int(u._picks[0]), int(u._origin[0])))
    return out


def gap_of(env, spec: str, seed: int) -> float:
    """``spec``'s gap to the isolated optimum on the episode of ``seed``."""
    pol = make_policy(spec, env, seed=0)
    obs, _ = env.reset(seed=seed)
    done = False
    while not done:
        obs, _, term, trunc, _ = env.step(pol.act(obs, env.unwrapped.action_masks()))
        done = term or trunc
    return float(env.unwrapped.optimality_gap())


def resampled_means(values: np.ndarray, workflow: np.ndarray,
                    rng: np.random.Generator) -> np.ndarray:  # fmt: skip
    """``RESAMPLES`` means of ``values`` (one per draw), each over whole workflows resampled
    with ``rng``."""
    ids = np.unique(workflow)
    sums = np.array([values[workflow == w].sum() for w in ids])
    counts = np.array([(workflow == w).sum() for w in ids])
    pick = rng.integers(0, len(ids), size=(RESAMPLES, len(ids)))
    return sums[pick].sum(1) / counts[pick].sum(1)


def by_workflow_ci(values: np.ndarray, workflow: np.ndarray, seed: int = 0) -> list[float]:
    """95% interval of the mean of ``values`` (one per draw) resampling whole workflows."""
    means = resampled_means(values, workflow, np.random.default_rng(seed))
    return [float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))]


def main() -> None:
    t0 = time.time()
    env = make_env(ENV, TEST, **{**KWARGS, **EXTRA, "scenario": PRESET,
                                 "optimality_reference": True})  # fmt: skip
    sets = RUNS[ENTRY][1]
    draws = problems(env, sets)
    first_seed: dict[tuple[int, int], int] = {}
    for seed, w, o in draws:
        first_seed.setdefault((w, o), seed)
    policies = {"entry": f"learned:{RUNS[ENTRY][0]}", "before": f"learned:{RUNS[BEFORE][0]}",
                "peft": "peft", "search": SEARCH}  # fmt: skip
    gaps = {k: {p: gap_of(env, spec, s) for p, s in first_seed.items()}
            for k, spec in policies.items()}  # fmt: skip
    # the same problem gives the same gap whatever the episode's seed (a check on 5 repeats)
    repeats = [(s, (w, o)) for s, w, o in draws if first_seed[(w, o)] != s][:5]
    same = all(gap_of(env, policies["entry"], s) == gaps["entry"][p] for s, p in repeats)
    workflow = np.array([w for _, w, _ in draws])
    per_draw = {k: np.array([gaps[k][(w, o)] for _, w, o in draws]) for k in policies}
    uniq = list(first_seed)
    out: dict = {
        "test": TEST, "episodes": len(draws), "sets": {str(k): v for k, v in sets.items()},
        "workflows": len(set(workflow.tolist())), "problems": len(uniq),
        "draws_per_problem": dict(Counter(Counter((w, o) for _, w, o in draws).values())),
        "repeats_give_the_same_gap": same, "policies": policies, "by_policy": {},
    }  # fmt: skip
    for k in policies:
        out["by_policy"][k] = {
            "mean_gap_over_draws": float(per_draw[k].mean()),
            "ci95_resampling_workflows": by_workflow_ci(per_draw[k], workflow),
            "mean_gap_over_problems": float(np.mean([gaps[k][p] for p in uniq])),
        }
    for k in ("peft", "before", "search"):
        d = per_draw["entry"] - per_draw[k]
        out["by_policy"]["entry"][f"minus_{k}"] = {
            "mean_over_draws": float(d.mean()),
            "ci95_resampling_workflows": by_workflow_ci(d, workflow),
            "mean_over_problems": float(np.mean([gaps["entry"][p] - gaps[k][p] for p in uniq])),
            "problems_lower_same_higher": [
                int(sum(gaps["entry"][p] < gaps[k][p] - 1e-9 for p in uniq)),
                int(sum(abs(gaps["entry"][p] - gaps[k][p]) <= 1e-9 for p in uniq)),
                int(sum(gaps["entry"][p] > gaps[k][p] + 1e-9 for p in uniq))],
        }  # fmt: skip
    out["seconds"] = round(time.time() - t0)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"{len(draws)} episodes, {out['workflows']} workflows, {len(uniq)} problems; "
          f"repeats give the same gap: {same}")  # fmt: skip
    for k, r in out["by_policy"].items():
        lo, hi = r["ci95_resampling_workflows"]
        print(f"{k}: {r['mean_gap_over_draws']:.2%} over draws [{lo:.2%}, {hi:.2%}] resampling "
              f"workflows; {r['mean_gap_over_problems']:.2%} over problems")  # fmt: skip
    for k in ("peft", "before", "search"):
        r = out["by_policy"]["entry"][f"minus_{k}"]
        lo, hi = r["ci95_resampling_workflows"]
        print(f"entry - {k}: {r['mean_over_draws']:+.2%} [{lo:+.2%}, {hi:+.2%}] resampling "
              f"workflows; {r['mean_over_problems']:+.2%} over problems; problems lower/same/"
              f"higher {r['problems_lower_same_higher']}")  # fmt: skip
    print(f"wrote {OUT} in {out['seconds']} s")


if __name__ == "__main__":
    main()
