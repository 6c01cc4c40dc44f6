"""Issue 13, descriptive: how often the WorkflowOffloading ``congested`` models leave HEFT's
server. For the zoo entry and the four HEFT-anchored runs fine-tuned by PPO
(``make_zoo_wf_congested_anchored.py``): 3 episodes (seeds 11,000-11,002) of two of the
unused validation families and of the training runs, the share of decisions where the model's
server is not HEFT's, and of those the share that go to the cloud;
also the four anchored clones without RL (``make_zoo_wf_congested_anchored_clone.py``).
Nothing is chosen on it. The entry is the one shipped when it runs, named in the JSON by its
card's config and seed (the committed JSON, of 2026-11-27 before that field, holds the entry
then shipped: ``workflow_offloading_congested_mix`` seed 2).

    python docs/results/wf_congested_deviation.py [--json PATH]   # default: the JSON beside it
    python docs/results/wf_congested_deviation.py --pool CONFIG [CONFIG ...] --json PATH

(``--pool``: the entry and the finished runs ``runs/zoo/CONFIG/seedN`` instead of the models
above; the residual runs of ``make_zoo_wf_congested_residual.py`` were measured so.)
"""

import argparse
import json
import time
from pathlib import Path

from rlsched.agents.models import read_meta
from rlsched.evaluate import make_env
from rlsched.policies.registry import make_policy
from rlsched.splits import SPLITS
from rlsched.zoo import ZOO_DIR, card

ENV = "rlsched/WorkflowOffloading-v0"
ROOT = Path(__file__).resolve().parents[2]
DATASETS = (
    "wfcommons:cycles?tasks=80&seed=21&workflows=4",
    "wfcommons:soykb?tasks=100&seed=21&workflows=4",
    SPLITS[ENV].train,
)
MODELS = {"entry": f"learned:{ZOO_DIR / 'workflow-congested-ppo' / 'model'}"} | {
    f"anchored{k}/seed{s}":
        f"learned:{ROOT}/runs/zoo/workflow_offloading_congested_anchored{k}/seed{s}/model"
    for k in (2, 3) for s in (0, 1)
} | {
    f"anchored_clone/seed{s}":
        f"learned:{ROOT}/runs/zoo/workflow_offloading_congested_anchored_clone/seed{s}/model"
    for s in range(4)
}  # fmt: skip


def deviation(ds: str, spec: str, episodes: int = 3) -> dict:
    # the observation keys the model reads (`finish_gap`); its anchor is its own, not the env's
    meta = read_meta(spec.removeprefix("learned:"))["env_kwargs"]
    env = make_env(ENV, ds, scenario="congested", finish_gap=bool(meta.get("finish_gap")))
    u = env.unwrapped
    pol = make_policy(spec, env, seed=0)
    ref = make_policy("heft", env, seed=0)
    n = dev = cloud = 0
    for ep in range(episodes):
        obs, _ = env.reset(seed=11_000 + ep)
        done = False
        while not done:
            mask = u.action_masks()
            heft = ref.act(obs, mask)
            a = pol.act(obs, mask)
            n += 1
            dev += a != heft
            cloud += a != heft and u.servers[a].is_cloud
            obs, _, term, trunc, _ = env.step(a)
            done = term or trunc
    return {"decisions": n, "deviate": dev / n, "of_those_to_cloud": cloud / max(dev, 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=str(ROOT / "docs/results/wf_congested_deviation.json"))
    ap.add_argument("--pool", nargs="*", default=None)
    args = ap.parse_args()
    models = MODELS if args.pool is None else {"entry": MODELS["entry"]} | {
        f"{cfg}/{run.name}": f"learned:{run / 'model'}"
        for cfg in args.pool
        for run in sorted((ROOT / "runs/zoo" / cfg).glob("seed*"))
        if (run / "run.json").is_file()
    }
    t0 = time.perf_counter()
    c = card("workflow-congested-ppo")
    out: dict = {"entry": f"{c['config']} --seed {c['seed']}"}
    for ds in DATASETS:
        for name, spec in models.items():
            r = out.setdefault(ds, {})[name] = deviation(ds, spec)
            print(f"{ds.split('?')[0][:24]:24s} {name:50s} {r['decisions']:5d} decisions, "
                  f"{r['deviate']:6.1%} not HEFT's server ({r['of_those_to_cloud']:.0%} of "
                  f"those to the cloud)", flush=True)
    out["seconds"] = time.perf_counter() - t0
    Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
