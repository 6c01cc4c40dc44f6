"""A confirmatory test of a zoo entry on fresh test episodes.

A card's test verdict comes from 10 episodes (seeds 1000+; LLMAutoscaling 5). That gives a wide
interval: ``pod-rebalancing-today-ppo`` showed -9.5 violations [-25.4, +5.8] against
``greedy_migration`` where the oracle's headroom is 20%. Adding episodes to those already seen
would let the number of episodes be chosen after the result, so this is a second, separate
test, fixed here before it ran:

- the shipped model unchanged; the card's test data, env arguments and preset;
- 30 episodes with seeds 2000-2029 (no overlap with the cards' 1000-1009);
- every heuristic, the model and the ``clairvoyant`` oracle (over the best heuristic) on the
  same episodes; the reference is the best heuristic measured there;
- the verdict is the paired 95% interval of the model against that reference. The share of
  the oracle's headroom it closes is ``(best - learned) / (best - oracle)`` on the means (signs
  turned where higher is better), with
  a paired percentile bootstrap interval (10,000 resamples of the episodes).

Writes ``docs/results/confirm_ENTRY.json``. Run from the repository root (PodRebalancing:
about 4 minutes here):

    python docs/results/confirm_test.py ENTRY [--seed S] [--tag TAG]

``--seed S``: a further test on 30 other fresh episodes (seeds S to S+29; 3000 for a third test,
fixed before a replaced entry's first run there), written to ``confirm_ENTRY_seedS.json``;
``--tag TAG`` names the file ``confirm_ENTRY_TAG.json`` instead (a replaced entry re-measured on
episodes an earlier model was tested on keeps that model's record). ``--plain``: every
heuristic that does not search and the model, no oracle and so no headroom (WorkflowOffloading's
search policies and oracle take over an hour for 30 episodes here).
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats as sps

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_zoo import ROOT

from rlsched.envs.base import episode_value
from rlsched.evaluate import compare
from rlsched.splits import SPLITS
from rlsched.spread import gain_pct
from rlsched.zoo import card

EPISODES, SEED = 30, 2000


def headroom_share(
    best: np.ndarray, learned: np.ndarray, oracle: np.ndarray, lower: bool
) -> dict:
    """The share of the oracle's headroom over ``best`` that ``learned`` closes, on the means
    (``lower``: lower is better), and its paired percentile bootstrap interval (episodes
    resampled together)."""
    sign = 1.0 if lower else -1.0

    def share(b: np.ndarray, lv: np.ndarray, o: np.ndarray) -> float:
        gap = sign * (b.mean() - o.mean())
        return float(sign * (b.mean() - lv.mean()) / gap) if gap > 0 else float("nan")

    res = sps.bootstrap((best, learned, oracle), share, paired=True, vectorized=False,
                        n_resamples=10_000, method="percentile", random_state=0)
    ci = res.confidence_interval
    return {"share": share(best, learned, oracle), "ci95": [float(ci.low), float(ci.high)]}


def main(name: str, seed: int = SEED, tag: str | None = None, plain: bool = False) -> None:
    t0 = time.perf_counter()
    c = card(name)
    env_id = c["env"]
    kwargs = dict(c.get("env_kwargs") or SPLITS[env_id].env_kwargs)
    if c.get("preset"):
        kwargs["scenario"] = c["preset"]
    spec = f"learned:zoo/{name}"
    policies = f"plain,{spec}" if plain else f"all,{spec},clairvoyant"
    rep = compare(env_id, c["test"]["dataset"], policies, episodes=EPISODES, seed=seed,
                  env_kwargs=kwargs)
    rows = {r["policy"]: r for r in rep["results"]}
    ref = rep["reference"]
    best = np.asarray(rows[ref]["episode_values"], dtype=float)
    learned = np.asarray(rows[spec]["episode_values"], dtype=float)
    lower = rep["direction"] == "lower"
    if plain:
        oracle_fields: dict = {"oracle": "not run (--plain)"}
    else:
        oracle = np.asarray(rows["clairvoyant"]["episode_values"], dtype=float)
        oracle_fields = {
            "oracle_vs_best": rows["clairvoyant"]["paired"],
            "headroom_pct": gain_pct(rows["clairvoyant"]["paired"], rep["direction"]),
            "headroom_closed": headroom_share(best, learned, oracle, lower),
        }
    out = {
        "entry": name, "dataset": c["test"]["dataset"], "env_kwargs": kwargs,
        "episodes": EPISODES, "seed": seed, "reference": ref, "main_metric": rep["main_metric"],
        "means": {name: episode_value(rep["main_metric"], r["mean_reward"], r["metrics"])
                  for name, r in rows.items()},
        "metrics": {name: r["metrics"] for name, r in rows.items()},
        "learned_vs_best": rows[spec]["paired"],
        **oracle_fields,
        "episode_values": {name: r["episode_values"] for name, r in rows.items()},
        "seconds": time.perf_counter() - t0,
    }  # fmt: skip
    suffix = f"_{tag}" if tag else "" if seed == SEED else f"_seed{seed}"
    path = ROOT / "docs/results" / f"confirm_{name}{suffix}.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    bulky = ("env_kwargs", "episode_values", "metrics")
    print(json.dumps({k: v for k, v in out.items() if k not in bulky}, indent=1))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("entry")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--tag", default=None)
    ap.add_argument("--plain", action="store_true",
                    help="every heuristic that does not search and the model; no oracle")
    a = ap.parse_args()
    main(a.entry, a.seed, a.tag, a.plain)
