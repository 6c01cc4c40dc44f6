"""Issue 13 item 1 for the small-DAG WorkflowOffloading split, now that PEFT is its best
heuristic: the search teacher with PEFT as its base (every valid server tried, PEFT finishing
the workflow; one workflow per episode is known on arrival, so nothing is sampled), beside
``mdp_rollout`` (the same over earliest finish) and PEFT itself. Bertsekas' rollout on a
deterministic model is never worse than its base; this measures by how much it is better, and
what it costs per decision. Descriptive: nothing is chosen on it.

    python docs/results/wf_small_peft_teacher.py

Plays the card's validation episodes (``seed=3``, seeds 10,000+) and test episodes (``seed=4``,
seeds 1000+), 40 each; writes ``docs/results/wf_small_peft_teacher.json``.
"""

import json
import time

import numpy as np
from make_zoo import ROOT
from make_zoo_wf_small import ENV, EPISODES, KWARGS, PRESET, TEST, TEST_SEED, VAL_SEED, VALIDATION

from rlsched.evaluate import make_env
from rlsched.policies.registry import make_policy, make_rollout
from rlsched.stats import bootstrap_mean_ci, paired

OUT = ROOT / "docs/results/wf_small_peft_teacher.json"
PLAYERS = ("peft", "mdp_rollout", "rollout over peft")


def play(dataset: str, seed0: int) -> dict:
    """Each player's completion and gap per episode, and its seconds per decision."""
    env = make_env(ENV, dataset, **KWARGS, scenario=PRESET, optimality_reference=True)
    base = env.unwrapped
    out: dict = {p: {"completion": [], "gap": [], "seconds": 0.0, "decisions": 0} for p in PLAYERS}
    for name in PLAYERS:
        if name == "rollout over peft":
            pol = make_rollout(env, "peft", horizon=None, futures=0, top_k=base.num_servers,
                               prefer_base=False, score="return", reward="makespan")  # fmt: skip
        else:
            pol = make_policy(name, env, seed=0)
        for k in range(EPISODES):
            obs, _ = env.reset(seed=seed0 + k)
            pol.reset(seed0 + k)
            done, info = False, {}
            while not done:
                t0 = time.perf_counter()
                a = pol.act(obs, base.action_masks())
                out[name]["seconds"] += time.perf_counter() - t0
                out[name]["decisions"] += 1
                obs, _, done, _, info = env.step(a)
            out[name]["completion"].append(float(info["metrics"]["mean_completion"]))
            out[name]["gap"].append(float(info["metrics"]["optimality_gap"]))
    return out


def main() -> None:
    t0 = time.perf_counter()
    res: dict = {}
    for split, dataset, seed in (("validation", VALIDATION, VAL_SEED), ("test", TEST, TEST_SEED)):
        runs = play(dataset, seed)
        row: dict = {"dataset": dataset, "seed": seed, "episodes": EPISODES}
        for name, r in runs.items():
            lo, hi = bootstrap_mean_ci(np.asarray(r["gap"]))
            row[name] = {"mean_completion": float(np.mean(r["completion"])),
                         "gap_mean": float(np.mean(r["gap"])), "gap_ci95": [lo, hi],
                         "ms_per_decision": 1e3 * r["seconds"] / r["decisions"],
                         "episode_values": r["completion"]}  # fmt: skip
        for name in ("peft", "mdp_rollout"):
            row["rollout over peft"][f"vs {name}"] = paired(
                runs["rollout over peft"]["completion"], runs[name]["completion"],
                direction="lower", reference=name, metric="mean_completion").to_json()  # fmt: skip
        res[split] = row
        for name in PLAYERS:
            s = row[name]
            print(f"{split} {name:18s} {s['mean_completion']:8.2f} s, gap {s['gap_mean']:.2%} "
                  f"[{s['gap_ci95'][0]:.2%}, {s['gap_ci95'][1]:.2%}], "
                  f"{s['ms_per_decision']:.1f} ms per decision", flush=True)  # fmt: skip
        for name in ("peft", "mdp_rollout"):
            p = row["rollout over peft"][f"vs {name}"]
            print(f"  rollout over peft vs {name}: {p['mean_diff']:+.2f} [{p['ci95'][0]:+.2f}, "
                  f"{p['ci95'][1]:+.2f}] {p['verdict']} {p['wins']}/{p['ties']}/{p['losses']}")
    res["seconds"] = time.perf_counter() - t0
    OUT.write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    main()
