"""Issue 13: one-sided residual scalers over HPA (configs/llm_autoscaling_residual_down.yaml,
``residual_range: [-1, 0]``: they can only hold a pool below where HPA would, never above;
seeds 0-4, runs/zoo/llm_residual_down/seedN), against the two-sided entry
`llm-autoscaling-hpa-residual-ppo` (docs/results/make_zoo_llm_residual.py, round 2).

Everything below was fixed and committed before any candidate was judged.

1. Candidates: the runs whose kept model departs from HPA (best periodic evaluation above the
   start's, run.json ``start_eval_mean_reward``).
2. Validation, fresh episodes (seeds 14,000+), 5 per setting, six settings: conv at 1x, 2x and
   3x as it is, and the same three loads with the request mix drawn per episode from training's
   own ranges (prompts x [0.5, 2.5], outputs x [0.1, 1.5]; not the code trace, which is test
   data). Players: HPA, threshold, the entry and every candidate, on the same episodes. A
   setting counts when the mean SLO attainment is at least HPA's and the mean cost at most
   HPA's, not both equal. The kept candidate counts the most settings; ties go to the higher
   mean attainment over the six.
3. The kept candidate replaces `llm-autoscaling-hpa-residual-ppo` only if it counts more
   settings than the entry on the same episodes.
4. Test, fresh episodes (seeds 5000+; 1000+ to 4000+ were used before), 10 per preset: code-1x
   to code-3x (the held-out trace), then conv-1x to conv-3x: the kept candidate and the entry
   as it was before this script paired with HPA and with threshold on SLO attainment and cost
   per episode, 95% paired intervals. At a preset the goal is met when attainment is not
   significantly below HPA's and cost not significantly above; "dominates" when, besides, one
   of the two is significantly better. Nothing here is chosen on test.

Writes docs/results/llm_residual_down_choice.json and, if the kept candidate replaces the
entry, its card (as make_zoo_llm_residual.py writes it) and its config.

    python docs/results/make_zoo_llm_residual_down.py
"""

import json
import shutil
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
from make_zoo import ROOT
from make_zoo_llm_residual import (
    HEURISTICS,
    NAME,
    departs,
    finish,
    means,
    run,
    ship_residual,
    test_round,
)

from rlsched.envs.make import make_env
from rlsched.splits import SPLITS
from rlsched.zoo import ZOO_DIR

ENV = "rlsched/LLMAutoscaling-v0"
ENTRY_COPY = ROOT / "runs/zoo/llm_residual_down/entry_before"
RUNS = [ROOT / f"runs/zoo/llm_residual_down/seed{s}" for s in range(5)]
VAL_SEED, VAL_EPISODES = 14_000, 5
TEST_SEED_NEW, TEST_EPISODES = 5000, 10
MIX = {"prompt_scale": [0.5, 2.5], "output_scale": [0.1, 1.5]}
OUT = ROOT / "docs/results/llm_residual_down_choice.json"


def meets(m: dict[str, float], hpa: dict[str, float]) -> bool:
    ok = m["slo_attainment"] >= hpa["slo_attainment"] and m["cost"] <= hpa["cost"]
    return ok and (m["slo_attainment"], m["cost"]) != (hpa["slo_attainment"], hpa["cost"])


def six_settings(
    specs: dict[str, str], entry: str, seed: int, out: dict, episodes: int = VAL_EPISODES,
    env_extra: dict | None = None,
) -> tuple[dict[str, int], dict[str, list[float]]]:
    """Rule 2: HPA, threshold, the entry and ``specs`` (name -> spec) on ``episodes`` episodes
    (seeds ``seed``+) of each of the six validation settings (``env_extra`` added to each
    setting's env arguments, e.g. bursty arrivals), their means written to ``out``; returns
    the settings each meets the goal in and its attainment per setting."""
    split = SPLITS[ENV]
    who = [*specs, "entry"]
    counts = dict.fromkeys(who, 0)
    att: dict[str, list[float]] = {w: [] for w in who}
    print("| validation | policy | SLO attainment | cost $ |\n|---|---|---|---|")
    for mix in ("conv", "mix"):
        for load in ("1x", "2x", "3x"):
            kw = {**split.env_kwargs, "scenario": f"conv-{load}", **(MIX if mix == "mix" else {}),
                  **(env_extra or {})}  # fmt: skip
            env = make_env(ENV, "azure-llm:conv", **kw)
            res = {h: means(run(h, env, seed, episodes)) for h in HEURISTICS}
            res["entry"] = means(run(entry, env, seed, episodes))
            res.update({n: means(run(s, env, seed, episodes)) for n, s in specs.items()})
            out[f"{mix}-{load}"] = res
            for w in who:
                counts[w] += meets(res[w], res["hpa"])
                att[w].append(res[w]["slo_attainment"])
            for k, m in res.items():
                print(f"| {mix}-{load} | {k} | {m['slo_attainment']:.3f} | {m['cost']:.2f} |",
                      flush=True)  # fmt: skip
    return counts, att


def six_setting_round(
    runs: list[Path],
    entry_copy: Path,
    seeds: tuple[int, int],
    out: Path,
    what: str,
    script: str,
    pool_words: str,
    entry_words: str = "the entry before",
    episodes: int = VAL_EPISODES,
    play_range: list | None = None,
    env_extra: dict | list[dict] | None = None,
    test_episodes: int = TEST_EPISODES,
    **more: Any,
) -> None:
    """Rules 1-4 for the candidate ``runs`` (those whose kept model departs from HPA):
    validation on the six settings (``seeds[0]``+, ``episodes`` each; ``env_extra`` a list:
    the six once per item, ``{}`` as they are, the settings met counted over all); a kept
    candidate that
    counts more settings than the entry replaces it (:func:`ship_residual`, its card naming
    ``pool_words``, ``entry_words`` and ``script``; saved to play ``play_range`` when given);
    then the test (``seeds[1]``+, ``test_episodes`` per preset) of it and the entry as it was
    (copied to ``entry_copy`` on the first run); the report (``more`` added to it) to ``out``.
    ``what`` names the candidate in the table."""
    trained = list(runs)
    t0 = time.perf_counter()
    if not entry_copy.exists():  # the entry as it is now, paired on test whatever happens
        shutil.copytree(ZOO_DIR / NAME / "model", entry_copy)
    entry = f"learned:{entry_copy}"
    runs = [r for r in runs if departs(r)]
    if not runs:  # rule 1 leaves no candidate: nothing to judge, the entry stays
        out.write_text(json.dumps({"env": ENV, **more, "runs": [str(r.relative_to(ROOT))
                       for r in trained], "candidates": {}, "kept": None,
                       "replaces_entry": False}, indent=1) + "\n")  # fmt: skip
        print(f"no run's kept model departs from its start: the entry stays ({out})")
        return
    # a run is named by its folder (seedN), or by its parent's too where that is ambiguous
    short = len({r.name for r in runs}) == len(runs)
    specs = {(r.name if short else f"{r.parent.name}/{r.name}"): f"learned:{r}/model"
             for r in runs}  # fmt: skip
    report: dict = {"env": ENV, **more, "validation_seed": seeds[0], "test_seed": seeds[1],
                    "candidates": {n: str(r.relative_to(ROOT))
                                   for n, r in zip(specs, runs, strict=True)},
                    "validation": {}, "test": {}}  # fmt: skip
    # 1-2. validation
    if isinstance(env_extra, list):  # several sets of six, each its own part of the report
        counts, att = Counter(), defaultdict(list)
        for extra in env_extra:
            part = report["validation"].setdefault(json.dumps(extra), {})
            c, a = six_settings(specs, entry, seeds[0], part, episodes, extra)
            counts.update(c)
            for w, v in a.items():
                att[w] += v
        n_settings = 6 * len(env_extra)
        where = "".join(f", as they are and with {e}" for e in env_extra if e)
    else:
        counts, att = six_settings(specs, entry, seeds[0], report["validation"], episodes,
                                   env_extra)  # fmt: skip
        n_settings, where = 6, f", with {env_extra}" if env_extra else ""
    kept = max(specs, key=lambda n: (counts[n], float(np.mean(att[n]))))
    replaces = counts[kept] > counts["entry"]
    report.update(settings_meeting_the_goal=counts, kept=kept, replaces_entry=replaces,
                  validation_seconds=time.perf_counter() - t0)  # fmt: skip
    print(f"\nsettings meeting the goal on validation: {counts}; kept: {kept}; "
          f"replaces {NAME}: {replaces}\n", flush=True)
    if replaces:
        ship_residual(
            runs[list(specs).index(kept)], trained,
            "meets the LLM goal (mean SLO attainment at least HPA's at no more than HPA's "
            f"mean cost, not both equal) at the most of {n_settings} validation settings (conv and "
            f"training's request mixes at 1x, 2x, 3x{where}; {episodes} episodes each, seeds "
            f"{seeds[0]:,}+), ties by mean attainment, among {pool_words} whose kept model "
            f"departs from its start; {script}",
            {"replaced_because": (
                f"meets the LLM goal on validation in {counts[kept]} of {n_settings} settings, "
                f"{entry_words} in {counts['entry']} (the same episodes)")},
            report["validation"], play_range,
        )  # fmt: skip
    # 4. test
    report["test"], rows = test_round({kept: specs[kept], "entry": entry}, seeds[1],
                                      test_episodes)  # fmt: skip
    finish(report, rows, t0, out, f"{kept} ({what}) | entry before")


def played_copy(run_dir: Path, out: Path, config_key: str, value: Any, meta_key: str) -> Path:
    """A copy at ``out`` of ``run_dir`` (record, config, evaluations, kept model) whose saved
    model plays ``value`` as ``meta.json`` ``residual[meta_key]`` (the config's
    ``config_key``): a trained model played another way, without training."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for f in ("run.json", "metrics.json", "progress.json"):
        if (run_dir / f).exists():
            shutil.copy2(run_dir / f, out / f)
    cfg = (run_dir / "config.yaml").read_text().rstrip("\n")
    (out / "config.yaml").write_text(f"{cfg}\n{config_key}: {json.dumps(value)}\n")
    shutil.copytree(run_dir / "model", out / "model")
    shutil.copytree(run_dir / "eval", out / "eval")  # the training record a card cites
    meta_path = out / "model" / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["residual"][meta_key] = value
    meta_path.write_text(json.dumps(meta, indent=2))
    return out


def second_test(
    folder: str, seed: int, what: str, episodes: int = TEST_EPISODES, name: str = "test2"
) -> None:
    """A later fixed test of the entry a round shipped: it and the entry before it (the copy
    ``runs/zoo/FOLDER/entry_before``) on fresh test seeds ``seed``+, ``episodes`` per preset,
    as :func:`test_round`; the report to ``docs/results/FOLDER_NAME.json``."""
    t0 = time.perf_counter()
    players = {"entry": f"learned:zoo/{NAME}",
               "entry before": f"learned:{ROOT}/runs/zoo/{folder}/entry_before"}  # fmt: skip
    report: dict = {"test_seed": seed, "episodes": episodes, "players": players}
    report["test"], rows = test_round(players, seed, episodes)
    finish(report, rows, t0, ROOT / f"docs/results/{folder}_{name}.json",
           f"entry ({what}) | entry before")  # fmt: skip


def residual_round(
    folder: str,
    seeds: Iterable[int],
    seed_pair: tuple[int, int],
    what: str,
    script: str,
    pool_words: str,
    episodes: int = 10,
    env_extra: dict | list[dict] | None = None,
    runs_folder: str | None = None,
    test_episodes: int = TEST_EPISODES,
) -> None:
    """:func:`six_setting_round` over the runs ``runs/zoo/RUNS_FOLDER/seedN`` (``seeds``, those
    that finished; ``runs_folder`` defaults to ``folder``), the entry copied to
    ``runs/zoo/FOLDER/entry_before``, ``episodes`` validation episodes per setting (the
    settings changed by ``env_extra`` as there); validation and test seeds ``seed_pair``,
    ``test_episodes`` per test preset; the
    report to ``docs/results/FOLDER_choice.json`` (the rounds since the fifth session of
    2026-11-27)."""
    runs = [ROOT / f"runs/zoo/{runs_folder or folder}/seed{s}" for s in seeds]
    more = {} if env_extra is None else {"env_extra": env_extra, "validation_env": env_extra}
    six_setting_round(
        [r for r in runs if (r / "run.json").exists()], ROOT / f"runs/zoo/{folder}/entry_before",
        seed_pair, ROOT / f"docs/results/{folder}_choice.json", what, script, pool_words,
        episodes=episodes, validation_episodes=episodes, test_episodes=test_episodes,
        **more,
    )  # fmt: skip


def main() -> None:
    six_setting_round(
        RUNS, ENTRY_COPY, (VAL_SEED, TEST_SEED_NEW), OUT, "one-sided residual",
        "docs/results/make_zoo_llm_residual_down.py", "the one-sided runs",
        "the two-sided entry",
    )  # fmt: skip


if __name__ == "__main__":
    main()
