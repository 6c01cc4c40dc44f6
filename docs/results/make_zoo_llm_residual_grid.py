"""Issue 13, LLM round S: round Q's recipe over more seeds, judged on a validation grid that
spans training's request mixes instead of drawing one mix per episode.

Why: in rounds Q and R the twelve validation settings (conv as it is and training's mix drawn
per episode, with and without bursts) counted the entry first (8 and 10 settings, against 7, 7
and 6 for the candidates), while on each fixed test the candidates met the goal at more presets
(5 and 5 of 6, against the entry's 3 and 4). A mix drawn per episode averages the goal over
training's range; a scaler meant to hold on traces it has not seen should hold at each edge of
that range. The grid's five mixes are the corners of training's ranges (prompts x 0.5 and x 2.5,
outputs x 0.1 and x 1.5, from ``configs/llm_autoscaling_residual_hpa_threshold_window.yaml``)
and their centre (x 1.5, x 0.8). They come from the training config alone; the code trace is
test data, and its mix was not looked at to place them.

Fixed here (2026-11-28, thirteenth session) and committed before seeds 4-15 trained:

1. Candidates: seeds 0-15 of ``configs/llm_autoscaling_residual_hpa_threshold_window.yaml``
   (``runs/zoo/llm_residual_hpa_threshold_window/seedN``; 0-3 trained on this machine in
   rounds Q and R, 4-15 on the device machine, twelve side by side, one torch thread each,
   torch 2.11 there), the finished runs whose kept model departs from its start (round Q's
   rule 1).
2. Validation, fresh episodes (seeds 73,000+; no seed of 73,000+ has played any episode of
   this env), 30 per setting, fifteen settings: the conv trace at conv-1x, -2x and -3x, each
   with the five mixes fixed (prompt_scale, output_scale). Players: HPA, the entry
   (``llm-autoscaling-hpa-threshold-residual-ppo`` as it is before this script) and every
   candidate; described, not chosen: ``hpa_threshold`` (window 16) and
   ``hpa_threshold?switch_window=1`` alone. A setting counts for a player when its mean SLO
   attainment is at least HPA's and its mean cost at most HPA's, not both equal. The kept
   candidate counts the most settings, ties by mean attainment over the fifteen. It replaces
   the entry (whose name it keeps) only if it counts more settings than the entry on the same
   episodes; a tie keeps the entry.
3. Test, fresh episodes (seeds 74,000-74,029), 30 per preset, code-1x to code-3x then conv-1x
   to conv-3x as every round's: the kept candidate and the entry as it was before this script,
   each paired with HPA and threshold; then the two heuristics of rule 2 the same way.
   Nothing is chosen on test.

    OMP_NUM_THREADS=1 python docs/results/make_zoo_llm_residual_grid.py
"""

import json
import shutil
import time
from multiprocessing import Pool

import numpy as np
from make_zoo import ROOT
from make_zoo_llm_residual import NAME, departs, finish, means, run, ship_residual, test_round
from make_zoo_llm_residual_down import ENV, meets

from rlsched.envs.make import make_env
from rlsched.splits import SPLITS
from rlsched.zoo import ZOO_DIR

FOLDER = "llm_residual_grid"
RUNS_FOLDER = "llm_residual_hpa_threshold_window"
SEEDS = (73_000, 74_000)
EPISODES = 30
MIXES = ((0.5, 0.1), (0.5, 1.5), (2.5, 0.1), (2.5, 1.5), (1.5, 0.8))
SETTINGS = [(load, p, o) for load in ("1x", "2x", "3x") for p, o in MIXES]
HEURISTICS = {"hpa_threshold": "hpa_threshold", "hpa_threshold w1": "hpa_threshold?switch_window=1"}
SCRIPT = "docs/results/make_zoo_llm_residual_grid.py"


def setting_name(load: str, p: float, o: float) -> str:
    return f"conv-{load} prompts x{p} outputs x{o}"


def one(task: tuple[int, str, str, int]) -> tuple[int, str, dict[str, float]]:
    """Validation setting ``task[0]`` played by ``task[2]`` (a policy spec), named ``task[1]``,
    on ``EPISODES`` episodes from seed ``task[3]``."""
    i, name, spec, seed = task
    load, p, o = SETTINGS[i]
    kw = {**SPLITS[ENV].env_kwargs, "scenario": f"conv-{load}", "prompt_scale": p,
          "output_scale": o}  # fmt: skip
    env = make_env(ENV, "azure-llm:conv", **kw)
    return i, name, means(run(spec, env, seed, EPISODES))


def validate(players: dict[str, str], seed: int) -> dict[str, dict]:
    """Every player (name -> spec) and HPA on the fifteen settings (seeds ``seed``+), on two
    processes."""
    t0 = time.perf_counter()
    tasks = [(i, n, s, seed) for i in range(len(SETTINGS))
             for n, s in {"hpa": "hpa", **players}.items()]  # fmt: skip
    res: dict[str, dict] = {setting_name(*s): {} for s in SETTINGS}
    names = list(res)
    with Pool(2) as pool:
        for n, (i, who, m) in enumerate(pool.imap_unordered(one, tasks), 1):
            res[names[i]][who] = m
            print(f"{n}/{len(tasks)} {names[i]} {who} {json.dumps(m)} "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)  # fmt: skip
    return res


def grid_round(
    folder: str,
    runs_folder: str,
    seeds: range,
    seed_pair: tuple[int, int],
    script: str,
    pool_words: str,
    heuristics: dict[str, str],
) -> None:
    """Rules 1-3 of round S for the runs ``runs/zoo/RUNS_FOLDER/seedN`` (``seeds``, those that
    finished and depart from their start), validation and test seeds ``seed_pair``, the
    ``heuristics`` (name -> spec) described beside them; the entry copied to
    ``runs/zoo/FOLDER/entry_before``, the report to ``docs/results/FOLDER_choice.json``."""
    t0 = time.perf_counter()
    trained = [r for s in seeds if ((r := ROOT / f"runs/zoo/{runs_folder}/seed{s}")
                                    / "run.json").exists()]  # fmt: skip
    runs = [r for r in trained if departs(r)]
    out = ROOT / f"docs/results/{folder}_choice.json"
    if not runs:  # rule 1 leaves no candidate: nothing to judge, the entry stays
        records = {str(r.relative_to(ROOT)): json.loads((r / "run.json").read_text())
                   for r in trained}  # fmt: skip
        out.write_text(json.dumps({
            "env": ENV, "trained": list(records), "candidates": {}, "kept": None,
            "replaces_entry": False,
            "runs": {k: {f: v.get(f) for f in ("steps", "seconds", "start_eval_mean_reward",
                                                "best_eval_mean_reward")}
                     | {"slo_dual_table": (v.get("slo_dual") or {}).get("table")}
                     for k, v in records.items()},
        }, indent=1) + "\n")  # fmt: skip
        print(f"no run's kept model departs from its start: the entry stays ({out})")
        return
    entry_copy = ROOT / f"runs/zoo/{folder}/entry_before"
    if not entry_copy.exists():  # the entry as it is now, paired on test whatever happens
        shutil.copytree(ZOO_DIR / NAME / "model", entry_copy)
    entry = f"learned:{entry_copy}"
    specs = {r.name: f"learned:{r}/model" for r in runs}
    report: dict = {"env": ENV, "validation_seed": seed_pair[0], "test_seed": seed_pair[1],
                    "episodes": EPISODES, "mixes": MIXES,
                    "trained": [str(r.relative_to(ROOT)) for r in trained],
                    "candidates": {n: str(r.relative_to(ROOT))
                                   for n, r in zip(specs, runs, strict=True)}}  # fmt: skip
    res = validate({**specs, "entry": entry, **heuristics}, seed_pair[0])
    who = [*specs, "entry", *heuristics]
    counts = {w: sum(meets(res[s][w], res[s]["hpa"]) for s in res) for w in who}
    att = {w: float(np.mean([res[s][w]["slo_attainment"] for s in res])) for w in who}
    cost = {w: float(np.mean([res[s][w]["cost"] for s in res])) for w in who}
    kept = max(specs, key=lambda n: (counts[n], att[n])) if specs else None
    replaces = kept is not None and counts[kept] > counts["entry"]
    report.update(validation=res, settings_met=counts, mean_attainment=att, mean_cost=cost,
                  kept=kept, replaces_entry=replaces,
                  validation_seconds=time.perf_counter() - t0)  # fmt: skip
    print(f"\nsettings met of {len(SETTINGS)}: {counts}\nkept: {kept}; replaces {NAME}: "
          f"{replaces}\n", flush=True)  # fmt: skip
    if replaces:
        assert kept is not None
        ship_residual(
            runs[list(specs).index(kept)], trained,
            "meets the LLM goal (mean SLO attainment at least HPA's at no more than HPA's "
            f"mean cost, not both equal) at the most of {len(SETTINGS)} validation settings "
            "(conv at 1x, 2x, 3x with the request mix fixed at each corner of training's ranges "
            f"and at their centre; {EPISODES} episodes each, seeds {seed_pair[0]:,}+), ties by "
            f"mean attainment, among {pool_words} whose kept model departs from its start; "
            f"{script}",
            {"replaced_because": (
                f"meets the LLM goal on validation in {counts[kept]} of {len(SETTINGS)} "
                f"settings, the entry before in {counts['entry']} (the same episodes)")},
            res,
        )  # fmt: skip
    if kept is not None:
        report["test"], rows = test_round({kept: specs[kept], "entry": entry}, seed_pair[1],
                                          EPISODES)  # fmt: skip
        finish(report, rows, t0, out, f"{kept} (residual over hpa_threshold) | entry before")
    report["test_heuristics"], rows = test_round(heuristics, seed_pair[1], EPISODES)
    report["test_presets_met"] = {
        w: sum(v[f"{w} goal"]["met"] for v in part.values())
        for part, ws in ((report.get("test", {}), [kept, "entry"]),
                         (report["test_heuristics"], list(heuristics)))
        for w in ws if part
    }  # fmt: skip
    finish(report, rows, t0, out, " | ".join(heuristics))
    print("test presets met of 6:", report["test_presets_met"])


if __name__ == "__main__":
    grid_round(
        FOLDER, RUNS_FOLDER, range(16), SEEDS, SCRIPT,
        "seeds 0-15 of configs/llm_autoscaling_residual_hpa_threshold_window.yaml", HEURISTICS,
    )  # fmt: skip
