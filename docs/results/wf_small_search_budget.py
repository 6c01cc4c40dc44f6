"""Issue 13: the search teacher over PEFT at serving time, under a decision budget.

Why: on WorkflowOffloading's small DAGs the search teacher (the rollout over PEFT to the
workflow's end, every valid server a candidate) is 1.14-1.40% from the CP-SAT optimum where
PEFT is 2.63%, at about 20 ms per decision; no fast student has carried its gain to a new
world of function types (rounds W1-W10, docs/offloading.md). Not tried until now: the search
itself on a scheduler's path with fewer candidates. ``rollout:peft?top_k=K&horizon=end&
futures=0&score=return&reward=makespan`` is that teacher with PEFT's ``K`` best servers as its
candidates (PEFT's own first; ties to it), so it costs about ``K`` rollouts per decision. (So
meant; as run, PEFT ranked no servers, so they were PEFT's own, the lowest valid one and
``K - 2`` drawn at random: see ``wf_small_search_ranked.py``.)

The rule, fixed here (2026-12-03) before any of these episodes played:

1. Candidates: ``K`` in 2, 3, 4 and 6 (every server of the 5 edge servers and the cloud).
2. Validation: 200 episodes of a world nothing else played
   (``synthetic:placement?workflows=200&tasks=15&seed=45``, seeds 20,000+). Chosen: the
   smallest ``K`` not significantly worse than ``K=6`` there (paired 95%, mean completion).
3. Test, whatever the choice: 200 fresh episodes of the test set (``seed=4``, seeds
   10,100-10,299; 1,000+ to 10,099 served earlier tests): every ``K`` beside PEFT, HEFT and
   the CP-SAT ``optimal``, each episode's gap to the isolated optimum, each ``K`` paired with
   PEFT. Nothing is chosen on test; the other budgets are reported beside the chosen one.
4. Decision latency: each ``K``'s median and 95th percentile time per decision, measured by a
   timing pass of 20 validation episodes alone in one process (the rollouts, no optimum).

A 12-episode smoke run of this script (validation seeds 91,000+, test seeds 91,100+) checked
it end to end before the rule ran; its figures were discarded.

Descriptive of a search policy, not a zoo entry: the goal's 0.2 ms per decision is a
learned policy's, and this policy costs milliseconds.

    python docs/results/wf_small_search_budget.py   # about 20 min on this machine's 2 cores

Writes ``docs/results/wf_small_search_budget.json``.
"""

import json
import time
from multiprocessing import Pool
from pathlib import Path

import gymnasium as gym
import numpy as np
from make_zoo import ROOT
from make_zoo_wf_small import ENV, KWARGS, PRESET, TEST, judge

from rlsched.policies.registry import make_policy
from rlsched.stats import bootstrap_mean_ci, paired

KS = (2, 3, 4, 6)
VALIDATION = "synthetic:placement?workflows=200&tasks=15&seed=45"
VAL_SEED, TEST_SEED, EPISODES = 20_000, 10_100, 200
EXTRA = {"lookahead": True, "finish_gap": True, "optimistic_cost": True, "contention": True}
OUT = ROOT / "docs/results/wf_small_search_budget.json"


def search(k: int) -> str:
    return f"rollout:peft?top_k={k}&horizon=end&futures=0&score=return&reward=makespan"


def play(job: tuple[str, int, str]) -> tuple[dict, dict]:
    """One ``judge`` run (a worker's share of the policies)."""
    dataset, seed, policies = job
    rep, gaps = judge(dataset, seed, policies, EXTRA, episodes=EPISODES)
    return rep, gaps


def run_set(dataset: str, seed: int, pool: Pool, with_optimal: bool) -> dict:
    """Every policy of the round on ``dataset`` (seeds ``seed``+), two workers side by side;
    each worker's compare has PEFT first, so every row is paired with PEFT on the same
    episodes."""
    extra = ",heft,optimal" if with_optimal else ",heft"
    jobs = [(dataset, seed, f"peft,{search(6)},{search(2)}{extra}"),
            (dataset, seed, f"peft,{search(4)},{search(3)}")]  # fmt: skip
    rows: dict = {}
    for rep, gaps in pool.map(play, jobs):
        for r in rep["results"]:
            rows.setdefault(r["policy"], {"mean_completion": r["metrics"]["mean_completion"],
                                          "episode_values": r["episode_values"],
                                          "episode_gaps": gaps[r["policy"]]})  # fmt: skip
    return rows


def pair(rows: dict, a: str, b: str) -> dict:
    return paired(rows[a]["episode_values"], rows[b]["episode_values"], direction="lower",
                  reference=b, metric="mean_completion").to_json()  # fmt: skip


def timing(k: int, validation: str = VALIDATION, val_seed: int = VAL_SEED,
           episodes: int = 20) -> dict:  # fmt: skip
    """Median and 95th percentile seconds per decision of ``search(k)`` alone."""
    env = gym.make(ENV, dataset=validation, **KWARGS, **EXTRA, scenario=PRESET)
    pol = make_policy(search(k), env, seed=0)
    times: list[float] = []
    for e in range(episodes):
        obs, _ = env.reset(seed=val_seed + e)
        pol.reset(val_seed + e)
        done = False
        while not done:
            mask = env.unwrapped.action_masks()
            t = time.perf_counter()
            a = pol.act(obs, mask)
            times.append(time.perf_counter() - t)
            obs, _, term, trunc, _ = env.step(a)
            done = term or trunc
    ms = np.asarray(times) * 1e3
    return {"decisions": len(ms), "median_ms": float(np.median(ms)),
            "p95_ms": float(np.percentile(ms, 95))}  # fmt: skip


def main(validation: str = VALIDATION, val_seed: int = VAL_SEED, test_seed: int = TEST_SEED,
         out_path: Path = OUT, rule: str = "docs/results/wf_small_search_budget.py") -> None:
    """The rule above; ``wf_small_search_ranked.py`` runs it again on fresh episodes."""
    t0 = time.time()
    out: dict = {"rule": rule, "ks": list(KS)}
    with Pool(2) as pool:
        val = run_set(validation, val_seed, pool, with_optimal=False)
        vs_full = {k: pair(val, search(k), search(6)) for k in KS if k != 6}
        chosen = next((k for k in KS if k == 6 or vs_full[k]["verdict"] != "worse"), 6)
        out["validation"] = {
            "dataset": validation, "seed": val_seed, "episodes": EPISODES,
            "mean_completion": {n: r["mean_completion"] for n, r in val.items()},
            "vs_full_search": vs_full,
            "vs_peft": {k: pair(val, search(k), "peft") for k in KS},
            "chosen_k": chosen}  # fmt: skip
        print(f"validation: chosen K={chosen}; vs K=6: "
              + ", ".join(f"K={k} {v['mean_diff']:+.3f} {v['verdict']}"
                          for k, v in vs_full.items()), flush=True)  # fmt: skip
        test = run_set(TEST, test_seed, pool, with_optimal=True)
    rows = {}
    for name, r in test.items():
        g = np.asarray(r["episode_gaps"])
        lo, hi = bootstrap_mean_ci(g)
        rows[name] = {"mean_completion": r["mean_completion"], "gap_mean": float(g.mean()),
                      "gap_ci95": [lo, hi]}  # fmt: skip
        if name != "peft":
            rows[name]["vs_peft"] = pair(test, name, "peft")
        print(f"test {name}: {r['mean_completion']:.2f} s, gap {g.mean():.2%} "
              f"[{lo:.2%}, {hi:.2%}]", flush=True)  # fmt: skip
    out["test"] = {"dataset": TEST, "seed": test_seed, "episodes": EPISODES, "rows": rows}
    out["latency"] = {k: timing(k, validation, val_seed) for k in KS}
    for k, v in out["latency"].items():
        print(f"K={k}: {v['median_ms']:.2f} ms median, {v['p95_ms']:.2f} ms p95", flush=True)
    out["seconds"] = round(time.time() - t0)
    out_path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {out_path} in {out['seconds']} s")


if __name__ == "__main__":
    main()
