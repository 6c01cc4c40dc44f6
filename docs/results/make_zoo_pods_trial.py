"""Issue 13, round L7: the PodRebalancing entry under a trial guard over greedy_migration,
chosen on fresh validation episodes of the nine validation clusters.

Why: every anchored entry since round L is better than greedy_migration on most clusters (on
23-24 of 32 clusters no model saw, worse on none) and worse on the test cluster on at least
one of its tests (round L6's: +17.3 violations [+8.4, +27.8] on the fixed test). Nothing on
validation told the steps apart beforehand (docs/pod_rebalancing.md). This round does not
train: it asks each cluster. The trial guard (:mod:`rlsched.policies.trial`,
``learned:PATH?trial=greedy_migration``) plays the network and greedy_migration from the
current state over 8 sampled futures of the requests (the workload's generator, never the
true future; the deployable search's futures) to the episode's end, and follows the network
until the next trial only where its paired gain over greedy exceeds one standard error;
greedy_migration otherwise. This round was designed after the test cluster's losses were
known (so its test is not blind to them), and nothing in it is set on the test cluster: the
settings below were fixed before any guarded policy played; a two-episode look at validation
cluster 12 (seeds 47,000-47,001, not used again) checked that a trial runs (one per
24-decision episode, 0.35 s) and nothing else.

    python docs/results/make_zoo_pods_trial.py      # about 5 minutes here

The rule, fixed here (2026-12-05, thirty-sixth session) before the runs:

1. Candidates: round L6's entry (the network as shipped) under a trial guard over
   greedy_migration with 8 futures, to the episode's end, significance 1, trying (A) once
   per episode (every 24 decisions, an episode's length in preset ``today``) or (B) every 8
   decisions (three trials an episode).
2. Validation: clusters 1 and 10-17, 20 fresh episodes each (seeds 47,100-47,119), each
   episode's violations divided by greedy_migration's mean on its cluster and the 180
   pooled. Eligible: not significantly worse than greedy_migration pooled, and
   significantly worse than greedy_migration on no cluster (paired 95% over its 20
   episodes). Kept: the eligible candidate with the lower pooled mean.
3. The kept guard ships with the entry (``meta.json`` ``trial``) when it is **not
   significantly worse than the entry without it** on the same 180 episodes (the guard is
   insurance; it must cost nothing measurable where the network wins). Otherwise nothing
   ships and nothing is tested.
4. On a shipment, tests fixed here: the fixed test the goals table reads (30 episodes of the
   test cluster, seeds 9000-9029: ``confirm_test.py pod-rebalancing-anchored-ppo --seed 9000
   --tag L7_seed9000``), 30 fresh episodes (seeds 10,200-10,229: ``--seed 10200``), the
   entry without its guard on the same episodes (recorded, never used to choose), and every
   test episode of the test cluster replayed (``pods_tests_replayed.py --tag L7 --also 9600
   9900 10200``).

Writes ``docs/results/pods_trial_choice.json`` and, on a shipment, the entry's guard and its
card (validation and test verdicts on the card's usual 10 episodes each).
"""

import json
import time

import numpy as np
from make_zoo import ROOT, compare_in_envs, remeasure_card, ship_trial, trial_spec
from make_zoo_pods_many import CLUSTERS, ENV, REF

from rlsched.agents.export import write_card
from rlsched.splits import SPLITS
from rlsched.stats import paired
from rlsched.zoo import ZOO_DIR

NAME = "pod-rebalancing-anchored-ppo"
SEED, EPISODES = 47_100, 20
OUT = ROOT / "docs/results/pods_trial_choice.json"
MODEL = ZOO_DIR / NAME / "model"
ENTRY = f"learned:{MODEL}"
#: the candidates' settings (``meta.json`` ``trial``), by label
SETTINGS = {
    "once an episode": {"anchor": REF, "futures": 8, "horizon": "end", "every": 24,
                        "significance": 1.0},
    "every 8 decisions": {"anchor": REF, "futures": 8, "horizon": "end", "every": 8,
                          "significance": 1.0},
}  # fmt: skip
METRIC = "violations / greedy_migration's cluster mean"


def ship(settings: dict, chosen_by: str) -> dict:
    """The guard in the entry's ``meta.json``, its card and a line in its retraining config;
    returns the card, for the caller to complete and write."""
    return ship_trial(
        NAME, settings, chosen_by,
        f"It plays under a trial guard over {settings['anchor']} (meta.json \"trial\", chosen "
        "on validation by docs/results/make_zoo_pods_trial.py): the network acts only where "
        "its rollouts over sampled futures beat the anchor's; training does not read the guard.",
    )  # fmt: skip


def main() -> None:
    t0 = time.perf_counter()
    card = json.loads((ZOO_DIR / NAME / "card.json").read_text())
    assert "trial" not in json.loads((MODEL / "meta.json").read_text()), "already guarded"
    kwargs = {**SPLITS[ENV].env_kwargs, "scenario": card["preset"], **card["env_kwargs"]}
    cands = {trial_spec(ENTRY, s): label for label, s in SETTINGS.items()}
    names = {REF: REF, ENTRY: "the entry"} | cands
    rel: dict[str, list[np.ndarray]] = {s: [] for s in names}
    per_cluster: dict[str, dict] = {}
    worse_on: dict[str, list[int]] = {s: [] for s in cands}
    for c in CLUSTERS:
        rows = compare_in_envs(ENV, f"synthetic:pods?seed={c}", REF,
                               [([ENTRY, *cands], kwargs)], EPISODES, SEED)  # fmt: skip
        vals = {r["policy"]: np.asarray(r["episode_values"], float) for r in rows}
        scale = float(vals[REF].mean())
        row: dict = {}
        for s in names:
            rel[s].append(vals[s] / scale)
            row[names[s]] = {"mean": float(vals[s].mean())}
            if s != REF:
                p = paired(vals[s], vals[REF], direction="lower", reference=REF,
                           metric="violations").to_json()  # fmt: skip
                row[names[s]]["vs_greedy"] = p["verdict"]
                if s in cands and p["verdict"] == "worse":
                    worse_on[s].append(c)
        per_cluster[f"cluster {c}"] = row
        print(f"cluster {c}: " + ", ".join(f"{names[s]} {vals[s].mean():.1f}" for s in names),
              flush=True)  # fmt: skip
    pooled = {s: np.concatenate(v) for s, v in rel.items()}

    def against(s: str, ref: str, what: str) -> dict:
        return paired(pooled[s], pooled[ref], direction="lower", reference=what,
                      metric=METRIC).to_json()  # fmt: skip

    vs_greedy = {s: against(s, REF, REF) for s in names if s != REF}
    eligible = [s for s in cands if vs_greedy[s]["verdict"] != "worse" and not worse_on[s]]
    kept = min(eligible, key=lambda s: pooled[s].mean(), default=None)
    vs_entry = {s: against(s, ENTRY, "the entry without a guard") for s in cands}
    ships = kept is not None and vs_entry[kept]["verdict"] != "worse"
    out = {
        "validation": {"clusters": list(CLUSTERS), "episodes_per_cluster": EPISODES,
                       "seed": SEED, "reference": REF,
                       "relative_means": {names[s]: float(v.mean()) for s, v in pooled.items()},
                       "vs_greedy": {names[s]: p for s, p in vs_greedy.items()},
                       "vs_entry": {names[s]: p for s, p in vs_entry.items()},
                       "clusters_worse_than_greedy": {cands[s]: v for s, v in worse_on.items()},
                       "per_cluster": per_cluster},
        "settings": SETTINGS, "kept": None if kept is None else cands[kept], "ships": ships,
    }  # fmt: skip
    for s in names:
        if s == REF:
            continue
        p = vs_greedy[s]
        print(f"  {names[s]:20s} {pooled[s].mean():.3f} of greedy's: {p['mean_diff']:+.3f} "
              f"[{p['ci95'][0]:+.3f}, {p['ci95'][1]:+.3f}] {p['verdict']}")  # fmt: skip
    print(f"kept {out['kept']}; vs the entry "
          f"{None if kept is None else vs_entry[kept]}; ships: {ships}", flush=True)
    out["seconds"] = time.perf_counter() - t0
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    if not ships:
        return
    assert kept is not None
    v = vs_entry[kept]
    card = ship(
        SETTINGS[cands[kept]],
        f"the lower mean violations relative to greedy_migration on {EPISODES} fresh episodes "
        f"of each of clusters {', '.join(map(str, CLUSTERS))} (seeds {SEED:,}+) among trials "
        f"{', '.join(SETTINGS)}, not significantly worse than greedy there (pooled or on any "
        f"cluster); against the entry without its guard there: {v['verdict']} "
        f"({v['mean_diff']:+.3f} of greedy's mean, 95% CI {v['ci95'][0]:+.3f} to "
        f"{v['ci95'][1]:+.3f}); docs/results/make_zoo_pods_trial.py",
    )
    remeasure_card(card, ENV, ENTRY, kwargs, "violations")
    write_card(NAME, card)
    print(f"the entry ships the trial guard {cands[kept]}: test {card['test']['paired']}",
          flush=True)


if __name__ == "__main__":
    main()
