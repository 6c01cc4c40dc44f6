"""Ship a long-budget run as a zoo entry (issue 13 item 6), replacing the entry's model if and
only if the run is the better of the two on validation.

The candidates are the entry shipped so far and the long run. Both play the same 10
validation episodes (seeds 10,000+) of the entry's preset beside every heuristic that does not
search; the one with the higher mean reward there is kept, and the test set (seeds 1000+) is
measured only for a new one. Then ``docs/results/zoo_oracle.py`` records the oracle in the new
card, and for placement envs ``rlsched zoo transfer NAME --write`` re-measures other sizes.

    python docs/results/make_zoo_long.py [NAME RUN [--no-critic]]
    (default: serverless-edge-maskable-ppo runs/long/serverless/seed0, the 1M-step run of
    configs/serverless_placement_long.yaml; the pods run of configs/pod_rebalancing_long.yaml:
    pod-rebalancing-today-ppo runs/long/pods/seed0 --no-critic)
"""

import json
import shutil
import sys
import tempfile
from pathlib import Path

import yaml
from make_zoo import ROOT, ship, verdict

from rlsched.agents.export import export_model
from rlsched.evaluate import compare
from rlsched.splits import SPLITS, TEST_SEED
from rlsched.zoo import ZOO_DIR, card

EPISODES = 10
#: card fields measured on (or describing) the shipped model: replaced, never carried over
MEASURED = {"seed", "seeds_trained", "selected_by", "training", "size_bytes", "validation",
            "test", "transfer"}


def main(name: str, run: Path, critic: bool) -> None:
    old = card(name)
    steps = json.loads((run / "metrics.json").read_text())
    steps = steps.get("steps") or steps.get("total_steps")
    if old["training"]["steps"] == steps and old["seed"] == json.loads(
            (run / "run.json").read_text())["seed"]:
        raise SystemExit(f"{name} already ships this run; nothing to do")
    env = old["env"]
    split = SPLITS[env]
    kw = {**split.env_kwargs, **old["env_kwargs"], "scenario": old["preset"]}
    tmp = Path(tempfile.mkdtemp())
    shutil.copytree(ZOO_DIR / name / "model", tmp / "short")
    size = export_model(run, tmp / "long", critic=critic)
    short, long_ = f"learned:{tmp / 'short'}", f"learned:{tmp / 'long'}"
    val = compare(env, split.validation, f"plain,{short},{long_}", episodes=EPISODES,
                  seed=10_000, env_kwargs=kw)
    rows = {r["policy"]: r for r in val["results"]}
    for spec in (short, long_):
        print(f"validation, {spec}: {rows[spec]['mean_reward']:.4f} reward; "
              + verdict(val, spec, EPISODES)["paired"]["verdict"]
              + f" vs {val['reference']} on {val['main_metric']}")
    if rows[long_]["mean_reward"] <= rows[short]["mean_reward"]:
        raise SystemExit("the shipped policy is as good on validation: the zoo keeps it")
    dest = ZOO_DIR / name / "model"
    shutil.rmtree(dest)
    shutil.copytree(tmp / "long", dest)
    spec = f"learned:{dest}"
    test = compare(env, split.test, f"plain,{spec}", episodes=EPISODES, seed=TEST_SEED,
                   env_kwargs=kw)
    keep = tuple(old["test"].get("metrics") or ())  # the metrics the card lists besides
    val_row = {**verdict(val, long_, EPISODES, keep), "seed": 10_000}
    cfg = yaml.safe_load((run / "config.yaml").read_text())
    card_out = {
        # what the card says of itself (name, env, preset, network...), not of the old model
        **{k: v for k, v in old.items() if k not in MEASURED},
        "seed": json.loads((run / "run.json").read_text())["seed"],
        "seeds_trained": [json.loads((run / "run.json").read_text())["seed"]],
        "selected_by": (
            "higher mean reward on the 10 validation episodes (seeds 10,000+) than the "
            f"{old['training']['steps']:,}-step entry it replaced "
            f"({rows[long_]['mean_reward']:.4g} vs {rows[short]['mean_reward']:.4g}; both "
            f"paired with {val['reference']})"
        ),
        "training": {
            "steps": steps,
            "dataset": split.train,
            "validation_dataset": split.validation,
            "init_model": (f"{cfg['init_model']} ({old['training']['steps']:,} steps, seed "
                           f"{old['seed']})" if cfg.get("init_model") else None),
            "replaced": {"steps": old["training"]["steps"], "seed": old["seed"],
                         "validation": {**verdict(val, short, EPISODES, keep), "seed": 10_000}},
        },
        "size_bytes": size,
        "validation": val_row,
        "test": {**verdict(test, spec, EPISODES, keep), "seed": TEST_SEED},
    }
    ship(card_out, run)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--no-critic"]
    name, run = args or ("serverless-edge-maskable-ppo", "runs/long/serverless/seed0")
    main(name, ROOT / run, "--no-critic" not in sys.argv)
