"""Rebuild the zoo entry `pod-rebalancing-today-ppo` as a model that runs at any node count,
from the runs of ``configs/pod_rebalancing_nodes.yaml`` (the network reads the per-move rows
and the clock only; seeds 0-3, ``docs/results/train_seeds.sh``).

1. The kept seed: each seed's kept model (its best periodic evaluation) on the same 10
   validation episodes (the validation cluster, seeds 10,000+), fewest violations.
2. It replaces the shipped model unless it is significantly worse than it on those validation
   episodes (paired 95% interval on violations); the test data plays no part.
3. If it does, its card takes the validation and test verdicts measured here, as every entry's
   (``make_zoo.held_out_entry``).

    python docs/results/make_zoo_pods_nodes.py
"""

import json

from make_zoo import ROOT, held_out_entry
from make_zoo_more import same_episodes_choice
from make_zoo_pods import ENV, EPISODES, NAME, PRESET  # the first model's entry

from rlsched.evaluate import compare
from rlsched.splits import SPLITS

RUNS = sorted(ROOT.glob("runs/zoo/pod_rebalancing_nodes/seed*"), key=lambda p: int(p.name[4:]))
OUT = ROOT / "docs/results/pods_nodes_choice.json"


def main() -> None:
    split = SPLITS[ENV]
    kwargs = {**split.env_kwargs, "scenario": PRESET}
    runs = [r for r in RUNS if (r / "run.json").exists()]
    kept, means = same_episodes_choice(ENV, runs, kwargs, "violations", lower_is_better=True)
    new, old = f"learned:{kept / 'model'}", f"learned:zoo/{NAME}"
    rep = compare(ENV, split.validation, f"{new},{old}", episodes=EPISODES, seed=10_000,
                  env_kwargs=kwargs, reference=old)
    p = next(r for r in rep["results"] if r["policy"] == new)["paired"]
    replace = p["verdict"] != "worse"
    choice = {"validation_violations_per_seed": {r.name: m for r, m in means.items()},
              "kept": kept.name, "new_vs_shipped_on_validation": p, "replaced": replace}
    OUT.write_text(json.dumps(choice, indent=1) + "\n")
    print(json.dumps(choice, indent=1), flush=True)
    if not replace:
        return
    held_out_entry(
        NAME, ENV, [kept], EPISODES, kwargs, kwargs,
        f"fewest mean violations of the {len(runs)} seeds' kept models (each its best periodic "
        f"evaluation) on the same {EPISODES} validation episodes (seeds 10,000+)",
        {"preset": PRESET, "trained_on": f"{split.train}, preset {PRESET}",
         "algo": "maskable_ppo", "policy_net": "node", "node_global_keys": ["clock"],
         "seeds_trained": sorted(int(r.name[4:]) for r in runs),
         "validation_mean_per_seed": {r.name: m for r, m in means.items()},
         "replaced_because": f"on the validation episodes, against the shipped model: "
                             f"{p['verdict']} ({p['mean_diff']:+.3g} violations, 95% CI "
                             f"{p['ci95'][0]:+.3g} to {p['ci95'][1]:+.3g})"},
        metrics=("violations", "migrations"),
    )


if __name__ == "__main__":
    main()
