"""Issue 13 item 4: the LLM scaler trained over randomised loads
(configs/llm_autoscaling_general.yaml, seeds 0-2, runs of docs/results/train_seeds.sh)
on the held-out code trace at 1x, 2x and 3x, against HPA and threshold, and beside the zoo's
scaler (trained on conv at 1-3x only).

Every policy runs the same 5 test episodes (300 s, seeds 1000+, the trace's real arrivals) per
preset. For SLO attainment and cost per episode, each learned row is paired with HPA and with
threshold: one seed alone (paired bootstrap over episodes) and the three seeds pooled (IQM,
stratified bootstrap over seeds within episodes), 95% intervals. Writes
docs/results/llm_general_eval.json and prints a markdown table.

    python docs/results/llm_general_eval.py            # runs/llm_general (randomised loads)
    python docs/results/llm_general_eval.py llm_mix    # runs/llm_mix (loads and request mixes)
"""

import json
import sys
import time
from pathlib import Path

import numpy as np

from rlsched.envs.make import make_env
from rlsched.evaluate import evaluate
from rlsched.policies.registry import make_policy
from rlsched.splits import SPLITS, TEST_SEED
from rlsched.stats import paired, paired_seeds

ROOT = Path(__file__).resolve().parents[2]
ENV = "rlsched/LLMAutoscaling-v0"
PRESETS = ("code-1x", "code-2x", "code-3x")
EPISODES = 5
GROUP = sys.argv[1] if len(sys.argv) > 1 else "llm_general"
SEEDS = [ROOT / f"runs/{GROUP}/seed{s}/model" for s in (0, 1, 2)]
HEURISTICS = ("hpa", "threshold")
ZOO = "learned:zoo/llm-autoscaling-slo-ppo"
OUT = ROOT / f"docs/results/{GROUP}_eval.json"


def run(spec: str, env, seed: int = TEST_SEED) -> dict[str, list[float]]:
    pol = make_policy(spec, env, seed=seed)
    eps = evaluate(pol, env, EPISODES, seed)
    return {k: [float(e.metrics[k]) for e in eps] for k in ("slo_attainment", "cost")}


def fmt(p, unit: str = "") -> str:
    lo, hi = p.ci95
    v = p.verdict if p.verdict == "no significant difference" else f"**{p.verdict}**"
    return f"{p.mean_diff:+.3g}{unit} [{lo:+.3g}, {hi:+.3g}] {v}"


def main() -> None:
    split = SPLITS[ENV]
    report: dict = {"env": ENV, "dataset": split.test, "episodes": EPISODES, "seed": TEST_SEED,
                    "models": [str(p.relative_to(ROOT)) for p in SEEDS], "presets": {}}
    rows = []
    t0 = time.perf_counter()
    for preset in PRESETS:
        env = make_env(ENV, split.test, **{**split.env_kwargs, "scenario": preset})
        res = {h: run(h, env) for h in HEURISTICS}
        res[ZOO] = run(ZOO, env)
        seeds = [run(f"learned:{p}", env) for p in SEEDS]
        entry: dict = {"policies": {**res, **{f"{GROUP}/seed{i}": s for i, s in enumerate(seeds)}}}
        for ref in HEURISTICS:
            for metric, direction in (("slo_attainment", "higher"), ("cost", "lower")):
                b = res[ref][metric]
                pooled = paired_seeds(np.array([s[metric] for s in seeds]), b,
                                      direction=direction, reference=ref, metric=metric)
                per_seed = [paired(s[metric], b, direction=direction, reference=ref,
                                   metric=metric) for s in seeds]
                zoo = paired(res[ZOO][metric], b, direction=direction, reference=ref,
                             metric=metric)
                entry[f"{metric} vs {ref}"] = {
                    "general_pooled": pooled.to_json(),
                    "general_per_seed": [p.to_json() for p in per_seed],
                    "zoo": zoo.to_json(),
                }
                rows.append((preset, ref, metric, pooled, per_seed, zoo))
        mean = {k: {m: float(np.mean(v[m])) for m in v} for k, v in entry["policies"].items()}
        entry["means"] = mean
        report["presets"][preset] = entry
        print(preset, json.dumps(mean), flush=True)
    report["seconds"] = time.perf_counter() - t0
    OUT.write_text(json.dumps(report, indent=1) + "\n")
    print("| preset | vs | metric | general, 3 seeds (IQM) | per seed Δ | zoo scaler (conv only) |")
    print("|---|---|---|---|---|---|")
    for preset, ref, metric, pooled, per_seed, zoo in rows:
        unit = " $" if metric == "cost" else ""
        seeds_txt = ", ".join(f"{p.mean_diff:+.3g}" for p in per_seed)
        print(f"| {preset} | {ref} | {metric} | {fmt(pooled, unit)} | {seeds_txt} | "
              f"{fmt(zoo, unit)} |")
    print(f"{report['seconds']:.0f} s")


if __name__ == "__main__":
    main()
