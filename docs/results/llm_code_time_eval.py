"""Issue 13 item 4: one LLM scaler trained across conv and code, judged on code it never saw.

The code trace is split in time (``rlsched.splits``, split ``code-time``): the scalers of
``configs/llm_autoscaling_code_time.yaml`` train on conv and on the code trace's first 1,800 s,
the control of ``configs/llm_autoscaling_code_time_conv_only.yaml`` on conv alone, with
everything else the same (loads 0.5-4x, the traces' own arrivals, SLO_CONSTRAINED, model
selection on the same 4 conv episodes). Five seeds of each, pooled: no seed is chosen. A third
recipe, added after the first two had been judged, is the issue's to the letter:
``configs/llm_autoscaling_code_time_poisson.yaml``, the first with Poisson arrivals.

The test: the code trace's remaining 1,636 s at 1x, 2x and 3x, episodes of 300 s, 30 per load,
fresh seeds (``SEED``, unplayed before this script first ran), against HPA, threshold, random
(the best heuristic on attainment at code-1x on the default split) and the shipped attainment entry
(trained on conv, under its trial guard). Paired 95% intervals on SLO attainment and cost per
episode: the seeds pooled (IQM, stratified bootstrap; the two recipes' seed ``i`` paired with
each other). ``check_not_trained_on`` refuses any model that trained on the test's seconds.

    docs/results/train_seeds.sh configs/llm_autoscaling_code_time.yaml runs/llm_code_time 0 1 2 3 4
    docs/results/train_seeds.sh configs/llm_autoscaling_code_time_conv_only.yaml \\
        runs/llm_code_time_conv 0 1 2 3 4
    docs/results/train_seeds.sh configs/llm_autoscaling_code_time_poisson.yaml \\
        runs/llm_code_time_poisson 0 1 2 3 4
    python docs/results/llm_code_time_eval.py    # writes docs/results/llm_code_time_eval.json
"""

import json
import time
from pathlib import Path

import numpy as np

from rlsched.envs.make import make_env
from rlsched.evaluate import check_not_trained_on, evaluate
from rlsched.policies.registry import make_policy
from rlsched.splits import split_of
from rlsched.stats import Paired, paired, paired_matrix

ROOT = Path(__file__).resolve().parents[2]
ENV = "rlsched/LLMAutoscaling-v0"
SPLIT = "code-time"
LOADS = (1.0, 2.0, 3.0)
EPISODES = 30
SEED = 92_500  # fresh: 92,400-92,402 were played by a smoke run of this script at 2x
SEEDS = (0, 1, 2, 3, 4)
GROUPS = {"conv+code": "runs/llm_code_time", "conv only": "runs/llm_code_time_conv",
          "conv+code Poisson": "runs/llm_code_time_poisson"}
HEURISTICS = ("hpa", "threshold", "random")
ZOO = "learned:zoo/llm-autoscaling-slo-ppo"
METRICS = (("slo_attainment", "higher"), ("cost", "lower"))
OUT = ROOT / "docs/results/llm_code_time_eval.json"


def run(spec: str, env, episodes: int = EPISODES, seed: int = SEED,
        reward: bool = False) -> dict[str, list[float]]:
    """``spec``'s SLO attainment and cost per episode on ``env``'s seeded episodes (with
    ``reward``, its return too: the env's objective)."""
    eps = evaluate(make_policy(spec, env, seed=seed), env, episodes, seed)
    out = {m: [float(e.metrics[m]) for e in eps] for m, _ in METRICS}
    return {**out, "reward": [float(e.reward) for e in eps]} if reward else out


Plays = dict[str, dict[str, dict[str, list[float]]]]


def play(dataset: str, presets: tuple[str, ...], policies: list[str], episodes: int, seed: int,
         extra: dict | None = None, reward: bool = False, check: bool = True) -> Plays:
    """``{preset: {policy: {metric: [...]}}}``: every policy on the same seeded episodes of
    ``dataset`` at each scenario preset (``extra``: more env arguments; ``reward``: the returns
    too; a policy named twice plays once). ``check``: first refuse a model trained on
    ``dataset`` (``check_not_trained_on``); off where a round plays one on data it trained on
    and says so."""
    split = split_of(ENV, SPLIT)
    if check:
        check_not_trained_on(policies, dataset, SPLIT)
    out: Plays = {}
    for preset in presets:
        begun = time.perf_counter()
        kwargs = {**split.env_kwargs, **(extra or {}), "scenario": preset}
        env = make_env(ENV, dataset, **kwargs)
        out[preset] = {spec: run(spec, env, episodes, seed, reward)
                       for spec in dict.fromkeys(policies)}  # fmt: skip
        print(f"{preset}: {time.perf_counter() - begun:.0f}s", flush=True)
    return out


def cell(p: Paired, unit: str = "") -> str:
    lo, hi = p.ci95
    v = p.verdict if p.verdict == "no significant difference" else f"**{p.verdict}**"
    return f"{p.mean_diff:+.3g}{unit} [{lo:+.3g}, {hi:+.3g}] {v}"


def main() -> None:
    split = split_of(ENV, SPLIT)
    models = {g: [f"learned:{ROOT / d}/seed{s}/model" for s in SEEDS] for g, d in GROUPS.items()}
    check_not_trained_on([ZOO, *(m for ms in models.values() for m in ms)], split.test, SPLIT)
    report: dict = {"env": ENV, "split": SPLIT, "dataset": split.test, "episodes": EPISODES,
                    "seed": SEED, "models": GROUPS, "seeds": SEEDS, "loads": {}}
    rows = []
    t0 = time.perf_counter()
    for load in LOADS:
        env = make_env(ENV, split.test, **{**split.env_kwargs, "rate_scale": load})
        res = {h: run(h, env) for h in (*HEURISTICS, ZOO)}
        groups = {g: [run(m, env) for m in ms] for g, ms in models.items()}
        entry: dict = {"policies": res, "groups": groups, "paired": {}}
        for metric, direction in METRICS:
            unit = " $" if metric == "cost" else ""
            g = {k: np.array([s[metric] for s in v]) for k, v in groups.items()}
            pairs = {f"{k} vs {ref}": paired_matrix(v, np.broadcast_to(res[ref][metric], v.shape),
                                                     direction=direction, reference=ref,
                                                     metric=metric)
                     for k, v in g.items() for ref in (*HEURISTICS, ZOO)}
            for a, b in (("conv+code", "conv only"), ("conv+code Poisson", "conv+code")):
                pairs[f"{a} vs {b}"] = paired_matrix(g[a], g[b], direction=direction,
                                                     reference=b, metric=metric)
            for ref in HEURISTICS:
                pairs[f"zoo vs {ref}"] = paired(res[ZOO][metric], res[ref][metric],
                                                direction=direction, reference=ref, metric=metric)
            entry["paired"][metric] = {k: p.to_json() for k, p in pairs.items()}
            rows += [(load, metric, k.replace(ZOO, "zoo"), cell(p, unit))
                     for k, p in pairs.items()]
        entry["means"] = {
            **{k: {m: float(np.mean(v[m])) for m, _ in METRICS} for k, v in res.items()},
            **{k: {m: float(np.mean([s[m] for s in v])) for m, _ in METRICS}
               for k, v in groups.items()},
            **{f"{k}/seed{i}": {m: float(np.mean(s[m])) for m, _ in METRICS}
               for k, v in groups.items() for i, s in zip(SEEDS, v, strict=True)},
        }
        report["loads"][f"{load:g}x"] = entry
        print(f"{load:g}x", json.dumps({k: entry["means"][k] for k in (*res, *groups)}),
              flush=True)
    report["seconds"] = time.perf_counter() - t0
    OUT.write_text(json.dumps(report, indent=1) + "\n")
    print("| load | metric | comparison | difference [95% interval] |")
    print("|---|---|---|---|")
    for load, metric, k, c in rows:
        print(f"| {load:g}x | {metric} | {k} | {c} |")
    print(f"{report['seconds']:.0f} s")


if __name__ == "__main__":
    main()
