"""Where the clairvoyant oracle's PodRebalancing headroom lies, on validation clusters where the
anchored models gain least (12 and 17) and most (13 and 15): descriptive, nothing is chosen on
it.

The anchored models choose among noop and greedy_migration's first 8 moves (``candidates: 8``).
For each cluster this plays, on the same 10 fresh validation episodes (seeds 29,000+):
greedy_migration; the oracle over it with its usual candidates (greedy's own move and the 15
it ranks next); the same oracle in the anchored env, which searches only the anchored moves;
and the entry. It also sorts the full oracle's decisions by where its move stands in greedy's
order: greedy's own, noop where greedy moves, another anchored move, or outside the anchor.

    python docs/results/pods_oracle_anchor.py     (writes pods_oracle_anchor.json)
"""

import json
import time
from collections import Counter
from typing import Any

import numpy as np
from make_zoo import ROOT, compare_in_envs

from rlsched.envs.make import make_env
from rlsched.evaluate import evaluate
from rlsched.policies.base import Observation, Policy
from rlsched.policies.pods import GreedyMigrationPolicy, anchored_actions
from rlsched.policies.registry import make_policy
from rlsched.splits import SPLITS
from rlsched.zoo import ZOO_DIR

ENV = "rlsched/PodRebalancing-v0"
CLUSTERS = (12, 17, 13, 15)
EPISODES, SEED, K = 10, 29_000, 8
REF = "greedy_migration"
ENTRY = "pod-rebalancing-anchored-ppo"


class Sorted(Policy):
    """Plays ``inner`` and counts where each of its actions stands in greedy's order."""

    def __init__(self, inner: Policy) -> None:
        self.inner, self.name = inner, inner.name
        self.counts: Counter[str] = Counter()
        self.greedy = GreedyMigrationPolicy()

    def reset(self, seed: int | None = None) -> None:
        self.inner.reset(seed)

    def act(self, observation: Observation, mask: np.ndarray) -> Any:
        a = int(self.inner.act(observation, mask))
        g = int(self.greedy.act(observation, mask))
        if a == g:
            self.counts["greedy's own" if g else "noop, as greedy"] += 1
        elif a == 0:
            self.counts["noop where greedy moves"] += 1
        elif a in anchored_actions(observation, mask, K):
            self.counts["another anchored move"] += 1
        else:
            self.counts["outside the anchor"] += 1
        return a


def main() -> None:
    t0 = time.perf_counter()
    kwargs = {**SPLITS[ENV].env_kwargs, "scenario": "today"}
    card = json.loads((ZOO_DIR / ENTRY / "card.json").read_text())
    out: dict[str, Any] = {"episodes": EPISODES, "seed": SEED, "clusters": {}}
    for c in CLUSTERS:
        data = f"synthetic:pods?seed={c}"
        groups = [
            ([f"learned:{ZOO_DIR / ENTRY / 'model'}"], {**kwargs, **card["env_kwargs"]}),
            (["clairvoyant"], {**kwargs, "candidates": K}),  # searches the anchored moves only
        ]
        rows = compare_in_envs(ENV, data, REF, groups, EPISODES, SEED)  # greedy's checked alike
        names = {REF: REF, "clairvoyant": "clairvoyant, anchored moves only"}
        means = {names.get(r["policy"], ENTRY): float(np.mean(r["episode_values"])) for r in rows}
        env = make_env(ENV, data, **kwargs)
        oracle = Sorted(make_policy("clairvoyant:greedy_migration", env, seed=SEED))
        played = evaluate(oracle, env, EPISODES, SEED)  # the full oracle, sorted as it plays
        means["clairvoyant"] = float(np.mean([e.metrics["violations"] for e in played]))
        g, full, anch = means[REF], means["clairvoyant"], means["clairvoyant, anchored moves only"]
        rec = {
            "means": means,
            "headroom_pct": 100 * (g - full) / g,
            "anchored_share_of_headroom": (g - anch) / (g - full) if g > full else None,
            "entry_share_of_headroom": (g - means[ENTRY]) / (g - full) if g > full else None,
            "oracle_decisions": dict(oracle.counts),
        }
        out["clusters"][str(c)] = rec
        print(f"cluster {c}: " + ", ".join(f"{k} {v:.1f}" for k, v in means.items())
              + f"; oracle's moves {dict(oracle.counts)}", flush=True)  # fmt: skip
    out["seconds"] = time.perf_counter() - t0
    (ROOT / "docs/results/pods_oracle_anchor.json").write_text(json.dumps(out, indent=1) + "\n")
    print(f"{out['seconds']:.0f} s")


if __name__ == "__main__":
    main()
