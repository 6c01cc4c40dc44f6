"""Build the zoo entry `llm-autoscaling-conv-code-ppo` (issue 13 item 4): the LLM scaler trained
across both traces, under the time split ``code-time`` (``rlsched.splits``).

Its runs are the five of ``configs/llm_autoscaling_code_time.yaml`` that docs/llm_autoscaling.md
measured ("Trained across conv and code"): the whole conv trace and the code trace's first
1,800 s, rate scales 0.5-4x drawn log-uniformly, ``reward_weights = SLO_CONSTRAINED``
(``docs/results/train_seeds.sh configs/llm_autoscaling_code_time.yaml runs/llm_code_time 0 1 2
3 4``). The kept seed is the one best on validation (each run's periodic evaluation on 4 conv
episodes at loads drawn from 0.5-4x, the same at every evaluation of a run, drawn from its
seed), never on test. Its card takes the validation verdict measured here (the conv
trace at 1x, seeds 10,000+) and the test verdict measured here on the split's test set, the
code trace after its first 1,800 s, at 2x (preset ``code-2x``, the issue's "2x code case"),
seeds 1000+, both on the env's main metric, SLO attainment, with cost beside it. The
clairvoyant oracle of the same episodes is taken from ``rlsched results --budget full --split
code-time`` (``docs/results/results_code_time.json``), so the demo's zoo stage can pair it.

    python docs/results/make_zoo_llm_code_time.py

It shipped seed 4 that way; round T1 (``make_zoo_llm_code_time_bursty.py``) chose seed 0 on
another validation and shipped it through :func:`main` (``run``, ``chosen_by``), the card
measured the same way.
"""

import json
from pathlib import Path

import yaml
from make_zoo import ROOT, select, ship, training_card, verdict

from rlsched.agents.export import export_model
from rlsched.agents.models import read_meta
from rlsched.evaluate import compare
from rlsched.splits import TEST_SEED, split_of
from rlsched.zoo import ZOO_DIR

ENV = "rlsched/LLMAutoscaling-v0"
NAME = "llm-autoscaling-conv-code-ppo"
SPLIT = "code-time"
PRESET = "code-2x"
RUNS = [ROOT / f"runs/llm_code_time/seed{s}" for s in range(5)]
EPISODES = 10
METRICS = ("slo_attainment", "cost")
FULL = ROOT / "docs/results/results_code_time.json"


def recorded_oracle(dataset: str) -> dict:
    """The clairvoyant oracle of the card's test setting in the full results run of the split,
    with that run's reference heuristic per episode (the demo pairs them only where it
    re-measures the same values)."""
    full = json.loads(FULL.read_text())
    (rep,) = [r for r in full["reports"] if r["env"] == ENV and r["dataset"] == dataset
              and r["env_kwargs"].get("scenario") == PRESET and r["seed"] == TEST_SEED]
    (o,) = [x for x in rep["results"] if x.get("kind") == "oracle"]
    ref = next(x for x in rep["results"] if x["policy"] == rep["reference"])
    return {
        "policy": o["policy"],
        "recorded": f"rlsched results --budget {full['budget']} --split {SPLIT}, {full['date']}",
        "source": f"docs/results/results_code_time.json (git {full['git'][:7]}, "
                  f"{full['machine']})",
        "main_metric": rep["main_metric"], "direction": rep["direction"],
        "episode_values": o["episode_values"],
        "reference": rep["reference"], "reference_episode_values": ref["episode_values"],
    }  # fmt: skip


def main(run: Path | None = None, chosen_by: str | None = None,
         runs: list[Path] | None = None) -> None:
    """Ship the entry: the run best on validation reward, or ``run`` where a later round chose
    it on another validation (``chosen_by`` says how) among ``runs`` (default: :data:`RUNS`;
    round T2's are another recipe's)."""
    split = split_of(ENV, SPLIT)
    vals, best = select(runs or RUNS)
    run = run or best
    size = export_model(run, ZOO_DIR / NAME / "model")
    spec = f"learned:{ZOO_DIR / NAME / 'model'}"
    kwargs = dict(split.env_kwargs)
    val = compare(ENV, split.validation, f"plain,{spec}", episodes=EPISODES, seed=10_000,
                  env_kwargs=kwargs)  # fmt: skip
    test = compare(ENV, split.test, f"plain,{spec}", episodes=EPISODES, seed=TEST_SEED,
                   env_kwargs={**kwargs, "scenario": PRESET})  # fmt: skip
    base = training_card(NAME, ENV, run, vals, size, chosen_by or
                        "best validation reward of the five seeds (periodic evaluation on 4 "
                        "conv episodes at loads drawn from 0.5-4x, the same at every "
                        "evaluation of a run, drawn from its seed)")  # fmt: skip
    meta = read_meta(run / "model")
    cfg = yaml.safe_load((run / "config.yaml").read_text())
    base["training"] |= {"dataset": split.train, "train_datasets": meta["train_datasets"],
                         "validation_dataset": cfg.get("eval_dataset") or split.validation}
    code = " and ".join(meta["train_datasets"])
    card = {
        **base,
        "split": SPLIT,
        "preset": PRESET,
        "trained_on": f"azure-llm:conv and {code} (seconds of the code trace before the "
                      "test's) at rate scales 0.5-4x drawn log-uniformly, reward_weights = "
                      "SLO_CONSTRAINED",
        "algo": "ppo",
        "policy_net": "mlp",
        "validation": {**verdict(val, spec, EPISODES, METRICS), "seed": 10_000},
        "test": {**verdict(test, spec, EPISODES, METRICS), "seed": TEST_SEED,
                 "oracle": recorded_oracle(split.test)},
    }  # fmt: skip
    ship(card, run)


if __name__ == "__main__":
    main()
