"""How much of the search teacher's gain over PEFT its large departures carry, on every test
set of the small-DAG WorkflowOffloading split (descriptive: round W7 was chosen before this ran,
and nothing is chosen on it).

Round W7 trained students of a teacher that leaves its base's server only for a gain of 5% or
more (``min_gain``). Whether the students then fail because the labels lost the teacher's gain
or because the network cannot learn them is told by the teachers themselves: the rollout over
PEFT (every valid server tried, PEFT finishing the workflow; ties to PEFT's server) with
``min_gain`` 0 and 0.05, beside PEFT, on the seven test sets of 40 episodes (seeds 1000+,
4000+ to 9000+), each episode's gap to the isolated optimum.

    python docs/results/wf_small_teacher_min_gain.py    (about 4 minutes here)

Writes ``docs/results/wf_small_teacher_min_gain.json``.
"""

import json
import time

import numpy as np
from make_zoo import ROOT
from make_zoo_wf_small import ENV, EPISODES, KWARGS, PRESET, TEST
from wf_small_contention_tests import SEEDS

from rlsched.evaluate import make_env
from rlsched.policies.registry import make_policy, make_rollout
from rlsched.stats import bootstrap_mean_ci, paired

OUT = ROOT / "docs/results/wf_small_teacher_min_gain.json"
GAINS = (0.0, 0.05)


def main() -> None:
    t0 = time.perf_counter()
    env = make_env(ENV, TEST, **KWARGS, scenario=PRESET, optimality_reference=True)
    base = env.unwrapped
    players = {"peft": make_policy("peft", env, seed=0)}
    for g in GAINS:
        players[f"teacher, min_gain {g:g}"] = make_rollout(
            env, "peft", horizon=None, futures=0, top_k=base.num_servers, prefer_base=True,
            score="return", reward="makespan", min_gain=g)  # fmt: skip
    runs = {p: {"completion": [], "gap": [], "departures": 0, "decisions": 0} for p in players}
    peft_choice = make_policy("peft", env, seed=0)
    for name, pol in players.items():
        for seed in SEEDS:
            for k in range(EPISODES):
                obs, _ = env.reset(seed=seed + k)
                pol.reset(seed + k)
                done, info = False, {}
                while not done:
                    mask = base.action_masks()
                    a = pol.act(obs, mask)
                    runs[name]["departures"] += int(a != peft_choice.act(obs, mask))
                    runs[name]["decisions"] += 1
                    obs, _, done, _, info = env.step(a)
                runs[name]["completion"].append(float(info["metrics"]["mean_completion"]))
                runs[name]["gap"].append(float(info["metrics"]["optimality_gap"]))
        print(f"{name} played", flush=True)
    out: dict = {"dataset": TEST, "seeds": list(SEEDS), "episodes_per_set": EPISODES}
    for name, r in runs.items():
        lo, hi = bootstrap_mean_ci(np.asarray(r["gap"]))
        out[name] = {"mean_completion": float(np.mean(r["completion"])),
                     "gap_mean": float(np.mean(r["gap"])), "gap_ci95": [lo, hi],
                     "departures": r["departures"], "decisions": r["decisions"]}  # fmt: skip
        if name != "peft":
            out[name]["vs peft"] = paired(
                r["completion"], runs["peft"]["completion"], direction="lower", reference="peft"
            ).to_json()
        s = out[name]
        vs = s.get("vs peft")
        print(f"{name:22s} {s['mean_completion']:8.2f} s, gap {s['gap_mean']:.2%} "
              f"[{s['gap_ci95'][0]:.2%}, {s['gap_ci95'][1]:.2%}], departs from PEFT in "
              f"{s['departures']} of {s['decisions']} decisions"
              + (f"; vs PEFT {vs['mean_diff']:+.2f} [{vs['ci95'][0]:+.2f}, {vs['ci95'][1]:+.2f}]"
                 f" {vs['wins']}/{vs['ties']}/{vs['losses']} {vs['verdict']}" if vs else ""),
              flush=True)  # fmt: skip
    a, b = (runs[f"teacher, min_gain {g:g}"]["completion"] for g in GAINS)
    out["min_gain 0.05 vs 0"] = paired(b, a, direction="lower", reference="min_gain 0").to_json()
    out["seconds"] = time.perf_counter() - t0
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"min_gain 0.05 vs 0: {out['min_gain 0.05 vs 0']}; {out['seconds']:.0f} s")


if __name__ == "__main__":
    main()
