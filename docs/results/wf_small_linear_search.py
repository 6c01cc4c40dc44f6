"""Issue 13, descriptive (training worlds only, nothing chosen or shipped): can a scorer that
is searched directly on makespan, rather than fitted to the search teacher's departures, carry
a gain over PEFT to worlds it did not see?

The scorer is linear in ten of the env's per-server keys (``FEATS``: the task's estimated
finish, its optimistic cost to the exit, the next child's one-step look-ahead finish, the
transfer, the rest of the workflow's load, the server's busy time, cloud, queue, start and
image); the valid server of least score is taken (ties: less transfer, lower index). Weights
(1, 1, 0, ...) are PEFT's own key. The cross-entropy method searches the weights (the
finish's fixed at 1 to set the scale): 25 generations of 24 candidates, each generation's
candidates on the same 160 fresh episodes (8 from each of 20 training worlds, pool seeds
18-37; W9's training worlds), scored by the mean of each episode's completion relative to
PEFT's; the 6 best move the mean and spread. The final mean is then played on 400 episodes of
four worlds the search did not use (pool seeds 38-41, seeds 500,000+), paired with PEFT.

    python docs/results/wf_small_linear_search.py   # about 4 min on this machine's 2 cores

Writes ``docs/results/wf_small_linear_search.json``.
"""

import json
import time
from multiprocessing import Pool

import gymnasium as gym
import numpy as np
from make_zoo import ROOT
from make_zoo_wf_small import ENV, KWARGS, PRESET

from rlsched.core.offloading import eft_order
from rlsched.policies.offloading import peft_choice
from rlsched.stats import bootstrap_mean_ci

FEATS = ["node_done", "node_oct", "node_child_done", "node_transfer", "node_subtree",
         "node_busy", "node_is_cloud", "node_queue", "node_start", "node_image"]  # fmt: skip
EXTRA = {"lookahead": True, "finish_gap": True, "optimistic_cost": True, "contention": True}
POOL = "synthetic:placement?workflows=250&tasks=15&seed={}"
TRAIN = [POOL.format(s) for s in range(18, 38)]
HELD_OUT = [POOL.format(s) for s in range(38, 42)]
OUT = ROOT / "docs/results/wf_small_linear_search.json"
_ENVS: dict[str, gym.Env] = {}


def play(dataset: str, seed: int, w: np.ndarray | None) -> float:
    """Mean completion of one episode: PEFT (``w`` None) or the linear scorer ``w``."""
    if dataset not in _ENVS:
        _ENVS[dataset] = gym.make(ENV, dataset=dataset, **KWARGS, **EXTRA, scenario=PRESET)
    env = _ENVS[dataset]
    u = env.unwrapped
    obs, _ = env.reset(seed=seed)
    done = False
    while not done:
        mask = u.action_masks()
        if w is None or not mask.any():
            a = peft_choice(obs, mask) if mask.any() else 0
        else:
            key = np.stack([obs[k] for k in FEATS], 1).astype(np.float64) @ w
            a = int(eft_order(key, obs["node_transfer"], mask)[0])
        obs, _, term, trunc, _ = env.step(a)
        done = term or trunc
    return float(u.metrics()["mean_completion"])


def played(job: tuple[np.ndarray | None, list[tuple[str, int]]]) -> np.ndarray:
    w, episodes = job
    return np.array([play(ds, s, w) for ds, s in episodes])


def main(generations: int = 25, population: int = 24, elite: int = 6, per_world: int = 8) -> None:
    t0 = time.time()
    rng = np.random.default_rng(0)
    peft = np.zeros(len(FEATS))
    peft[:2] = 1.0
    mu, sd = peft.copy(), np.full(len(FEATS), 0.3)
    sd[0] = 0.0
    history = []
    with Pool(2) as pool:
        for g in range(generations):
            episodes = [(ds, int(rng.integers(10**6))) for ds in TRAIN for _ in range(per_world)]
            cands = [mu + sd * rng.standard_normal(len(FEATS)) for _ in range(population)]
            res = pool.map(played, [(None, episodes), (mu, episodes)]
                           + [(c, episodes) for c in cands])  # fmt: skip
            rel = [float(np.mean(r / res[0] - 1)) for r in res[1:]]
            best = np.argsort(rel[1:])[:elite]
            top = np.array([cands[i] for i in best])
            mu = 0.5 * mu + 0.5 * top.mean(0)
            sd = np.maximum(0.7 * sd + 0.3 * top.std(0), 0.02)
            sd[0] = 0.0
            history.append({"generation": g, "mean_before_vs_peft": rel[0],
                            "best_vs_peft": rel[1 + best[0]],
                            "mean": mu.round(4).tolist()})  # fmt: skip
            print(f"{g}: mean {rel[0]:+.3%}, best {rel[1 + best[0]]:+.3%} vs PEFT", flush=True)
        episodes = [(ds, 500_000 + k) for ds in HELD_OUT for k in range(100)]
        base, found = pool.map(played, [(None, episodes), (mu, episodes)])
    rel = found / base - 1
    lo, hi = bootstrap_mean_ci(rel)
    out = {
        "features": FEATS, "weights": mu.tolist(), "peft_weights": peft.tolist(),
        "train_worlds": TRAIN, "held_out_worlds": HELD_OUT, "history": history,
        "held_out": {"episodes": len(rel), "mean_relative_to_peft": float(rel.mean()),
                     "ci95": [lo, hi], "wins": int((rel < -1e-9).sum()),
                     "ties": int((np.abs(rel) <= 1e-9).sum()), "losses": int((rel > 1e-9).sum()),
                     "peft_mean_completion": float(base.mean()),
                     "scorer_mean_completion": float(found.mean())},
        "seconds": round(time.time() - t0),
    }  # fmt: skip
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    h = out["held_out"]
    print(f"held out: {h['mean_relative_to_peft']:+.3%} [{lo:+.3%}, {hi:+.3%}] vs PEFT, "
          f"{h['wins']}/{h['ties']}/{h['losses']}; wrote {OUT} in {out['seconds']} s")  # fmt: skip


if __name__ == "__main__":
    main()
