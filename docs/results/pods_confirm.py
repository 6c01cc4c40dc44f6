"""A confirmatory test of the zoo's ``pod-rebalancing-today-ppo`` on fresh test episodes.

Its card's test verdict comes from 10 episodes (seeds 1000+): no significant difference from
``greedy_migration`` (-9.5 violations [-25.4, +5.8]), where the oracle's headroom is 20%. Ten
episodes give a wide interval, and adding episodes to those already seen would let the number
of episodes be chosen after the result. So this is a second, separate test, fixed here before
it ran:

- the shipped model unchanged; the card's test data, env arguments and preset;
- 30 episodes with seeds 2000-2029 (no overlap with the card's 1000-1009);
- every heuristic, the model and the ``clairvoyant`` oracle (over the best heuristic) on the
  same episodes; the reference is the best heuristic measured there;
- the verdict is the paired 95% interval of the model against that reference. The share of
  the oracle's headroom it closes is ``(best - learned) / (best - oracle)`` on the means, with
  a paired percentile bootstrap interval (10,000 resamples of the episodes).

Writes ``docs/results/pods_confirm.json``. Run from the repository root (about 3 minutes here):

    python docs/results/pods_confirm.py
"""

import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats as sps

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_zoo import ROOT
from make_zoo_pods import ENV, NAME, PRESET

from rlsched.evaluate import compare
from rlsched.splits import SPLITS
from rlsched.zoo import card

EPISODES, SEED = 30, 2000
OUT = ROOT / "docs/results/pods_confirm.json"


def headroom_share(best: np.ndarray, learned: np.ndarray, oracle: np.ndarray) -> dict:
    """The share of the oracle's headroom over ``best`` that ``learned`` closes, on the means,
    and its paired percentile bootstrap interval (episodes resampled together)."""

    def share(b: np.ndarray, lv: np.ndarray, o: np.ndarray) -> float:
        gap = b.mean() - o.mean()
        return float((b.mean() - lv.mean()) / gap) if gap > 0 else float("nan")

    res = sps.bootstrap((best, learned, oracle), share, paired=True, vectorized=False,
                        n_resamples=10_000, method="percentile", random_state=0)
    ci = res.confidence_interval
    return {"share": share(best, learned, oracle), "ci95": [float(ci.low), float(ci.high)]}


def main() -> None:
    t0 = time.perf_counter()
    c = card(NAME)
    kwargs = {**(c.get("env_kwargs") or SPLITS[ENV].env_kwargs), "scenario": PRESET}
    spec = f"learned:zoo/{NAME}"
    rep = compare(ENV, c["test"]["dataset"], f"all,{spec},clairvoyant", episodes=EPISODES,
                  seed=SEED, env_kwargs=kwargs)
    rows = {r["policy"]: r for r in rep["results"]}
    ref = rep["reference"]
    best = np.asarray(rows[ref]["episode_values"], dtype=float)
    learned = np.asarray(rows[spec]["episode_values"], dtype=float)
    oracle = np.asarray(rows["clairvoyant"]["episode_values"], dtype=float)
    out = {
        "entry": NAME, "dataset": c["test"]["dataset"], "env_kwargs": kwargs,
        "episodes": EPISODES, "seed": SEED, "reference": ref, "main_metric": rep["main_metric"],
        "means": {name: r["metrics"][rep["main_metric"]] for name, r in rows.items()},
        "learned_vs_best": rows[spec]["paired"],
        "oracle_vs_best": rows["clairvoyant"]["paired"],
        "headroom_pct": float(100 * (best.mean() - oracle.mean()) / best.mean()),
        "headroom_closed": headroom_share(best, learned, oracle),
        "seconds": time.perf_counter() - t0,
    }  # fmt: skip
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps({k: v for k, v in out.items() if k != "env_kwargs"}, indent=1))


if __name__ == "__main__":
    main()
