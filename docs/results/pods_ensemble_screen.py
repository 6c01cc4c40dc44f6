"""Issue 13, a screening (not a verdict; nothing was chosen on it): PodRebalancing ensembles of
the anchored entry and the eight-cluster models of ``make_zoo_pods_many.py`` (the mean of the
members' log-probabilities over the anchor's 9 moves), on the nine validation clusters of that
round, 10 episodes each on screening seeds 23,000+ (its choice used 22,000+). Printed on
2026-11-28 (ninth session): violations relative to greedy_migration's cluster mean, the entry
0.852, the entry with seed 0 0.854, the entry with seeds 0-2 0.865; against the entry
+0.002 [-0.022, +0.028] and +0.013 [-0.014, +0.043]. Neither is better, so no ensemble
policy was built.

    python docs/results/pods_ensemble_screen.py   (needs runs/zoo/pods_anchored_many)
"""

from pathlib import Path
from typing import Any

import numpy as np

from rlsched.envs.base import episode_value
from rlsched.envs.make import make_env
from rlsched.evaluate import evaluate
from rlsched.policies.base import Policy
from rlsched.policies.registry import make_policy
from rlsched.splits import SPLITS
from rlsched.stats import paired

ROOT = Path(__file__).resolve().parents[2]
ENV = "rlsched/PodRebalancing-v0"
KW = {**SPLITS[ENV].env_kwargs, "scenario": "today"}
ENTRY = "learned:zoo/pod-rebalancing-anchored-ppo"
MANY = [f"learned:{ROOT}/runs/zoo/pods_anchored_many/seed{s}/model" for s in (0, 1, 2)]
CLUSTERS, EPISODES, SEED = (1, 10, 11, 12, 13, 14, 15, 16, 17), 10, 23_000


class Ensemble(Policy):
    """The members' mean log-probability over the first member's anchored moves."""

    name = "ensemble"

    def __init__(self, members: list[Any]) -> None:
        self.members = members

    def reset(self, seed: int | None = None) -> None:
        for p in self.members:
            p.reset(seed)

    def act(self, observation: Any, mask: np.ndarray) -> int:
        first = self.members[0]
        valid = first._anchor(observation, mask, first.candidates)
        if not len(valid):
            return first.act(observation, mask)
        total = np.zeros(len(valid))
        for p in self.members:
            z = p._scorer.logits(observation, valid).astype(np.float64)
            z -= z.max()
            total += z - np.log(np.exp(z).sum())
        return int(valid[np.argmax(total)])


def main() -> None:
    rel: dict[str, list[np.ndarray]] = {"entry": [], "entry+seed0": [], "entry+seeds0-2": []}
    for c in CLUSTERS:
        env = make_env(ENV, f"synthetic:pods?seed={c}", **KW)

        def values(pol: Any, env: Any = env) -> np.ndarray:
            eps = evaluate(pol, env, EPISODES, SEED, None, "screen")
            return np.array([episode_value("violations", e.reward, e.metrics) for e in eps])

        greedy = values(make_policy("greedy_migration", env, seed=SEED))
        members = [make_policy(s, env, seed=SEED) for s in [ENTRY, *MANY]]
        played = {"entry": values(members[0]), "entry+seed0": values(Ensemble(members[:2])),
                  "entry+seeds0-2": values(Ensemble(members))}  # fmt: skip
        print(c, f"greedy {greedy.mean():.1f}",
              *(f"{n} {v.mean():.1f}" for n, v in played.items()), flush=True)  # fmt: skip
        for n, v in played.items():
            rel[n].append(v / greedy.mean())
    pooled = {n: np.concatenate(v) for n, v in rel.items()}
    for n, v in pooled.items():
        print(f"{n}: {v.mean():.3f} of greedy's")
    for n in ("entry+seed0", "entry+seeds0-2"):
        p = paired(pooled[n], pooled["entry"], direction="lower").to_json()
        print(f"{n} vs the entry: {p['mean_diff']:+.3f} {p['ci95']} {p['verdict']}")


if __name__ == "__main__":
    main()
