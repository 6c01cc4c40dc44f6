"""Issue 13, a screening (not a verdict; nothing was chosen on it): the PodRebalancing entry
(round L's weights) with its no-move logit lowered by a bias ``b``, on the nine validation
clusters (1, 10-17), 10 episodes each on screening seeds 36,000+.

Why: on its fixed test the entry made 6.2 migrations per episode against greedy_migration's
20.4 and the oracle's 16.5, with 9.6% more violations than greedy. The training reward charges
``migration_cost`` 0.003 per move (a third of greedy's episode reward), the verdict counts
violations only, so the entry may have learned to move too seldom. The validation clusters
show the same habit (8.0 migrations against greedy's 18.7) without the loss. Printed on
2026-11-29 (violations relative to greedy_migration's cluster mean; migrations per episode):

    b     0: 0.742, 8.0 migrations
    b     4: 0.754, 12.0; against b 0 +0.012 [-0.009, +0.034], no significant difference
    b     8: 0.792, 17.2; +0.050 [+0.029, +0.075], worse
    b    16: 0.841, 23.4; +0.099 [+0.073, +0.130], worse
    b    64: 0.845, 24.0; +0.103 [+0.078, +0.133], worse

The no-move logit minus the best move's: quantiles 5/25/50/75/95% -41.3, -2.5, 3.7, 8.5, 12.8.
On validation, moving more costs violations, so no biased policy was built.

    python docs/results/pods_noop_bias_screen.py 10 36000 0,4,8,16,64
"""

import json
import sys
import time
from typing import Any

import numpy as np

from rlsched.envs.base import episode_value
from rlsched.envs.make import make_env
from rlsched.evaluate import evaluate
from rlsched.policies.base import Policy
from rlsched.policies.registry import make_policy
from rlsched.splits import SPLITS
from rlsched.stats import paired
from rlsched.zoo import ZOO_DIR

ENV = "rlsched/PodRebalancing-v0"
NAME = "pod-rebalancing-anchored-ppo"
CLUSTERS = (1, 10, 11, 12, 13, 14, 15, 16, 17)


class NoopBiased(Policy):
    """The anchored entry with ``bias`` taken off its no-move logit; with ``gaps`` given, it
    records the no-move logit minus the best move's at each decision where both are valid."""

    def __init__(self, learned: Any, bias: float, gaps: list[float] | None = None) -> None:
        self.learned, self.bias, self.gaps, self.name = learned, bias, gaps, f"b{bias:g}"

    def reset(self, seed: int | None = None) -> None:
        self.learned.reset(seed)

    def act(self, observation: Any, mask: np.ndarray) -> int:
        p = self.learned
        valid = p._anchor(observation, mask, p.candidates)
        if not len(valid):
            return int(p.act(observation, mask))
        z = p._scorer.logits(observation, valid).astype(np.float64)
        if valid[0] == 0:
            if self.gaps is not None and len(valid) > 1:
                self.gaps.append(float(z[0] - z[1:].max()))
            z[0] -= self.bias
        return int(valid[np.argmax(z)])


def main(episodes: int, seed: int, biases: list[float]) -> None:
    t0 = time.perf_counter()
    card = json.loads((ZOO_DIR / NAME / "card.json").read_text())
    kw = {**SPLITS[ENV].env_kwargs, "scenario": "today", **card["env_kwargs"]}
    gaps: list[float] = []
    rel: dict[str, list[np.ndarray]] = {}
    moves: dict[str, list[np.ndarray]] = {}
    for c in CLUSTERS:
        env = make_env(ENV, f"synthetic:pods?seed={c}", **kw)
        entry = make_policy(f"learned:zoo/{NAME}", env, seed=seed)
        players = {"greedy": make_policy("greedy_migration", env, seed=seed)}
        players |= {f"b{b:g}": NoopBiased(entry, b, gaps if b == 0 else None) for b in biases}
        row = []
        for n, pol in players.items():
            eps = evaluate(pol, env, episodes, seed, None, "screen")
            v = np.array([episode_value("violations", e.reward, e.metrics) for e in eps])
            rel.setdefault(n, []).append(v)
            moves.setdefault(n, []).append(np.array([e.metrics["migrations"] for e in eps]))
            row.append(f"{n} {v.mean():.1f}/{moves[n][-1].mean():.1f}")
        scale = rel["greedy"][-1].mean()
        for n in players:
            rel[n][-1] = rel[n][-1] / scale
        print(f"cluster {c} (violations/migrations): " + ", ".join(row), flush=True)
    pooled = {n: np.concatenate(v) for n, v in rel.items()}
    base = f"b{biases[0]:g}"
    for n, v in pooled.items():
        line = f"{n}: {v.mean():.3f} of greedy's, {np.concatenate(moves[n]).mean():.1f} migrations"
        if n not in ("greedy", base):
            p = paired(v, pooled[base], direction="lower").to_json()
            lo, hi = p["ci95"]
            line += f"; against {base} {p['mean_diff']:+.3f} [{lo:+.3f}, {hi:+.3f}] {p['verdict']}"
        print(line)
    q = np.quantile(np.array(gaps), [0.05, 0.25, 0.5, 0.75, 0.95]).round(1)
    print(f"no-move logit minus the best move's, quantiles 5-95%: {q}; "
          f"{time.perf_counter() - t0:.0f} s")  # fmt: skip


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), [float(b) for b in sys.argv[3].split(",")])
