"""Issue 13, round L3: the anchored PodRebalancing entry under a margin gate over
greedy_migration, chosen on fresh validation episodes of the nine validation clusters.

Why: round L's entry (``pod-rebalancing-anchored-ppo``) is significantly better than
greedy_migration on the validation clusters (-19% of greedy's violations, round L2's record)
and significantly worse on its fixed test on the test cluster (+12.9 [+4.2, +23.1] violations,
seeds 9000-9029). The margin gate of :class:`rlsched.policies.learned.LearnedPolicy`
(``learned:PATH?anchor=greedy_migration&margin=M``) keeps greedy_migration's action unless
the network's logit for its own beats greedy's by at least ``M``. On three episodes of
validation cluster 1 already played (seeds 33,000-33,002), explored before this rule was
fixed, the entry left greedy in 28 of 72 decisions, with logit gaps from 0.3 to 11.7 (median
4.0). Nothing is trained:

    python docs/results/make_zoo_pods_margin.py

The rule, fixed here (2026-11-29) before any gated entry played the episodes below:

1. Candidates: the entry gated by greedy_migration at margins 0, 1, 2, 4 and 8 (margin 0 is
   the entry itself; an infinite margin is greedy_migration, not a candidate).
2. Validation: clusters 1 and 10-17, 20 fresh episodes each (seeds 41,000-41,019), each
   episode's violations divided by greedy_migration's mean on its cluster and the 180 pooled,
   as in round L. Eligible: not significantly worse than greedy_migration there (paired 95%).
   Kept: the eligible candidate with the lowest mean; equal means go to the larger margin.
   The kept gate ships with the entry (``meta.json`` ``gate``) unless it is margin 0; none
   eligible: the entry stays.
3. On a replacement, a test fixed here: 30 fresh episodes of the test cluster, seeds
   9300-9329 (``confirm_test.py pod-rebalancing-anchored-ppo --seed 9300``), and the entry
   without its gate on the same episodes (``confirm_vs_replaced.py``; recorded, never used to
   choose).

Writes ``docs/results/pods_margin_choice.json`` and, on a replacement, the entry's gate and its
card (validation and test verdicts on the card's usual 10 episodes each).
"""

import json
import time

import numpy as np
from make_zoo import ROOT, compare_in_envs, remeasure_card, ship_gate
from make_zoo_pods_many import CLUSTERS, ENV, REF

from rlsched.agents.export import write_card
from rlsched.gate import gated_spec
from rlsched.splits import SPLITS
from rlsched.stats import paired
from rlsched.zoo import ZOO_DIR

NAME = "pod-rebalancing-anchored-ppo"
MARGINS = (0.0, 1.0, 2.0, 4.0, 8.0)
SEED, EPISODES = 41_000, 20
OUT = ROOT / "docs/results/pods_margin_choice.json"
ENTRY = f"learned:{ZOO_DIR / NAME / 'model'}"


def gated(margin: float) -> str:
    """The entry gated by greedy_migration at ``margin``."""
    return gated_spec(ZOO_DIR / NAME / "model", REF, margin)


def main() -> None:
    t0 = time.perf_counter()
    card = json.loads((ZOO_DIR / NAME / "card.json").read_text())
    kwargs = {**SPLITS[ENV].env_kwargs, "scenario": card["preset"], **card["env_kwargs"]}
    cands = {gated(m): m for m in MARGINS}
    rel: dict[str, list[np.ndarray]] = {s: [] for s in [REF, *cands]}
    per_cluster: dict[str, dict] = {}
    for c in CLUSTERS:
        rows = compare_in_envs(ENV, f"synthetic:pods?seed={c}", REF, [(list(cands), kwargs)],
                               EPISODES, SEED)  # fmt: skip
        vals = {r["policy"]: np.asarray(r["episode_values"], float) for r in rows}
        scale = float(vals[REF].mean())
        per_cluster[f"cluster {c}"] = {s: float(v.mean()) for s, v in vals.items()}
        for s in rel:
            rel[s].append(vals[s] / scale)
        print(f"cluster {c}: " + ", ".join(f"{s[-22:]} {vals[s].mean():.1f}" for s in rel),
              flush=True)  # fmt: skip
    pooled = {s: np.concatenate(v) for s, v in rel.items()}
    metric = "violations / greedy_migration's cluster mean"
    vs_greedy = {s: paired(pooled[s], pooled[REF], direction="lower", reference=REF,
                           metric=metric).to_json() for s in cands}  # fmt: skip
    eligible = [s for s in cands if vs_greedy[s]["verdict"] != "worse"]
    kept = min(eligible, key=lambda s: (pooled[s].mean(), -cands[s]), default=None)
    replaces = kept is not None and cands[kept] > 0
    vs_entry = None if kept is None else paired(
        pooled[kept], pooled[gated(0.0)], direction="lower", reference="the entry so far",
        metric=metric).to_json()  # fmt: skip
    out = {
        "validation": {"clusters": list(CLUSTERS), "episodes_per_cluster": EPISODES,
                       "seed": SEED, "reference": REF,
                       "relative_means": {f"margin {m:g}": float(pooled[s].mean())
                                          for s, m in cands.items()},
                       "vs_greedy": {f"margin {m:g}": vs_greedy[s] for s, m in cands.items()},
                       "per_cluster_means": per_cluster},
        "kept": None if kept is None else f"margin {cands[kept]:g}",
        "kept_vs_entry": vs_entry, "replaces": replaces,
    }  # fmt: skip
    for s, m in cands.items():
        p = vs_greedy[s]
        print(f"  margin {m:g}: {pooled[s].mean():.3f} of greedy's: {p['mean_diff']:+.3f} "
              f"[{p['ci95'][0]:+.3f}, {p['ci95'][1]:+.3f}] {p['verdict']}")  # fmt: skip
    print(f"kept {out['kept']}; vs the entry {vs_entry}; replaces: {replaces}", flush=True)
    out["seconds"] = time.perf_counter() - t0
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    if not replaces:
        return
    assert kept is not None and vs_entry is not None
    card = ship_gate(
        NAME, {"anchor": REF, "margin": cands[kept]}, "docs/results/make_zoo_pods_margin.py"
    )
    remeasure_card(card, ENV, ENTRY, kwargs, "violations")
    lo, hi = vs_entry["ci95"]
    card["gate_chosen_by"] = (
        f"lowest mean violations relative to greedy_migration on {EPISODES} fresh episodes of "
        f"each of clusters {', '.join(map(str, CLUSTERS))} (seeds {SEED:,}+) among margins "
        f"{', '.join(f'{m:g}' for m in MARGINS)}, not significantly worse than greedy there; "
        f"against the entry without its gate there: {vs_entry['verdict']} "
        f"({vs_entry['mean_diff']:+.3f} of greedy's mean, 95% CI {lo:+.3f} to {hi:+.3f}); "
        "docs/results/make_zoo_pods_margin.py"
    )
    write_card(NAME, card)
    print(f"the entry ships margin {cands[kept]:g}: test {card['test']['paired']}", flush=True)


if __name__ == "__main__":
    main()
