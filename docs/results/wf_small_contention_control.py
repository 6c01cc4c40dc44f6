"""Round W4's control (descriptive: nothing is chosen on it). Round W4's students differ from
round W2's expert iteration in two ways: the env's ``contention`` keys and periodic
evaluations on a set of their own (100 episodes of ``seed=7``). The control,
``configs/workflow_offloading_small_peft_exit_apart.yaml``, changes only the second (seeds
0-1, trained after W4's choice)::

    docs/results/train_seeds.sh configs/workflow_offloading_small_peft_exit_apart.yaml \\
      runs/zoo/workflow_offloading_small_peft_exit_apart 0 1
    python docs/results/wf_small_contention_control.py

Each run's kept model plays W4's 100 validation episodes (``seed=9``, seeds 16,000+) beside
PEFT and W4's two students, paired with PEFT and with the W4 student of the same seed; each
run's expert-round fits (in sample) are printed too. Writes
``docs/results/wf_small_contention_control.json``.
"""

import json

from make_zoo import ROOT
from make_zoo_wf_small import ENV, KWARGS, PRESET

from rlsched.evaluate import compare
from rlsched.stats import paired

VALIDATION = "synthetic:placement?workflows=200&tasks=15&seed=9"
SEED, EPISODES = 16_000, 100
RUNS = {
    "control": ROOT / "runs/zoo/workflow_offloading_small_peft_exit_apart",
    "w4": ROOT / "runs/zoo/workflow_offloading_small_contention_exit",
}
OUT = ROOT / "docs/results/wf_small_contention_control.json"


def main() -> None:
    specs = {f"{k}/seed{s}": f"learned:{d / f'seed{s}' / 'model'}" for k, d in RUNS.items()
             for s in (0, 1)}  # fmt: skip
    kw = {**KWARGS, "lookahead": True, "finish_gap": True, "optimistic_cost": True,
          "contention": True, "scenario": PRESET}  # fmt: skip
    rep = compare(ENV, VALIDATION, ",".join(["peft", *specs.values()]), episodes=EPISODES,
                  seed=SEED, env_kwargs=kw)  # fmt: skip
    rows = {r["policy"]: r for r in rep["results"]}
    out: dict = {"dataset": VALIDATION, "seed": SEED, "episodes": EPISODES, "runs": {}}
    for name, spec in specs.items():
        vals = rows[spec]["episode_values"]
        row = {"mean_completion": rows[spec]["metrics"]["mean_completion"],
               "vs_peft": paired(vals, rows["peft"]["episode_values"], direction="lower",
                                 reference="peft").to_json()}  # fmt: skip
        if name.startswith("control"):
            twin = specs[name.replace("control", "w4")]
            pair = paired(vals, rows[twin]["episode_values"], direction="lower", reference="w4")
            row["vs_w4_same_seed"] = pair.to_json()
        run = RUNS[name.split("/")[0]] / name.split("/")[1]
        rounds = json.loads((run / "run.json").read_text())["expert_rounds"]
        row["expert_fits"] = [[r["accuracy"], r["changed_accuracy"]] for r in rounds]
        out["runs"][name] = row
        cells = "; ".join(f"{k} {v['mean_diff']:+.2f} [{v['ci95'][0]:+.2f}, {v['ci95'][1]:+.2f}] "
                          f"{v['wins']}/{v['ties']}/{v['losses']} {v['verdict']}"
                          for k, v in row.items() if k.startswith("vs_"))  # fmt: skip
        fits = " ".join(f"{a:.3f}/{c:.3f}" for a, c in row["expert_fits"])
        print(f"{name}: {row['mean_completion']:.2f} s; {cells}; fits {fits}", flush=True)
    out["peft_mean_completion"] = rows["peft"]["metrics"]["mean_completion"]
    OUT.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
