"""Where the residual LLM scaler's cost differs from HPA's: the mean number of instances per
pool (ACTIVE + SCALING_UP, sampled after every decision) over the first 10 test episodes of
docs/results/make_zoo_llm_residual.py (round 2, seeds 4000+), at code-1x (where it costs about
$2 more than HPA) and conv-2x (where it costs less and attains more). Descriptive: nothing is
chosen on it. Writes docs/results/llm_residual_pools.json.

    python docs/results/llm_residual_pools.py
"""

import json
from pathlib import Path

import numpy as np

from rlsched.envs.make import make_env
from rlsched.policies.registry import make_policy
from rlsched.splits import SPLITS

ROOT = Path(__file__).resolve().parents[2]
ENV = "rlsched/LLMAutoscaling-v0"
SEEDS = range(4000, 4010)


def main() -> None:
    split = SPLITS[ENV]
    out: dict = {}
    for preset, dataset in (("code-1x", split.test), ("conv-2x", "azure-llm:conv")):
        env = make_env(ENV, dataset, **{**split.env_kwargs, "scenario": preset})
        for spec in ("hpa", "learned:zoo/llm-autoscaling-hpa-residual-ppo"):
            pools: dict[str, list[float]] = {t: [] for t in env.unwrapped.pools}
            cost, att = [], []
            for seed in SEEDS:
                pol = make_policy(spec, env, seed=seed)
                pol.reset(seed)
                obs, _ = env.reset(seed=seed)
                done, sizes = False, {t: [] for t in pools}
                while not done:
                    obs, _, term, trunc, info = env.step(
                        pol.act(obs, env.unwrapped.action_masks()))
                    done = term or trunc
                    for t in sizes:
                        s = env.unwrapped.sim.scaling_manager.pool_sizes(t)
                        sizes[t].append(s["active"] + s["scaling_up"])
                for t in pools:
                    pools[t].append(float(np.mean(sizes[t])))
                cost.append(float(info["metrics"]["cost"]))
                att.append(float(info["metrics"]["slo_attainment"]))
            row = {f"mean_{t}_instances": float(np.mean(v)) for t, v in pools.items()}
            row.update(cost=float(np.mean(cost)), slo_attainment=float(np.mean(att)))
            out.setdefault(preset, {})[spec] = row
            print(preset, spec, json.dumps({k: round(v, 3) for k, v in row.items()}), flush=True)
    (ROOT / "docs/results/llm_residual_pools.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
