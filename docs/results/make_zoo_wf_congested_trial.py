"""Issue 13, round C7: the WorkflowOffloading ``congested`` entry's network under a trial guard
over PEFT, free of its familiarity guard.

Why: the shipped entry (round C6, ``workflow-congested-vetted``) departs from PEFT only on
workflows near the epigenomics and genome graphs its departures paid on, so on the test
families (blast, helloworld) it plays PEFT's schedule, and "online, significantly faster than
HEFT" holds only because PEFT is. A trial guard (``rlsched.policies.trial``) decides by
playing, not by shape: every 10 decisions it plays the network and PEFT over 4 sampled futures
to the episode's end and follows the network only where its gain is above one standard error.
The scoping look of 2026-12-06 (``wf_congested_trial_scope.py``, 12 episodes of new
training-family graphs, ``seed=33``) found it -64 s against PEFT per episode. Its settings are
that look's; nothing is trained or tuned here. The guard's ``familiar: off`` (new,
``rlsched.policies.trial``) lets the shipped entry play the network without its familiarity
guard under the trial guard.

    python docs/results/make_zoo_wf_congested_trial.py [--dry]   # about 35 min on two processes

The rule, fixed here (2026-12-06, before any episode of it was played):

1. Candidates: E, the entry as shipped; G, the entry's network (its threshold) without its
   familiarity guard under the trial guard ``SETTINGS`` (anchor PEFT, every 10 decisions, 4
   futures, to the episode's end, significance 1).
2. Validation, two sets, fresh workflows and seeds: U, the three unused families
   (``cycles?tasks=80``, ``seismology?tasks=110``, ``soykb?tasks=100``, each
   ``seed=34&workflows=4``, ``dag_max_tasks: 112``; 5 episodes each, seeds 75,100+: a guarded
   episode of them takes 80-180 s); T, the four training families (``montage?tasks=60``,
   ``epigenomics?tasks=60``, ``genome?tasks=60``, ``srasearch?tasks=40``, each
   ``seed=35&workflows=4``; 6 episodes each, seeds 75,200+). HEFT, PEFT, E and G; each
   episode's mean completion relative to PEFT's on it; paired 95% intervals.
3. G is eligible if it is not significantly worse than the best of HEFT and PEFT (the lower
   mean on that set) on U and on T. Between trials it decides as the network does (round C6
   measured 0.053 ms median unguarded); each episode's time (all four players) is reported.
   It ships if eligible and its mean over the 39 episodes is lower than E's; equal means go to
   E. Shipping G: the entry's ``meta.json`` gains ``trial`` (``SETTINGS``), its card is
   measured again on its own episodes.
4. Test, whatever the choice: 30 fresh episodes of the split's test set (seeds
   31,000-31,029; no earlier run played them): HEFT, PEFT, E and G, mean completion, each
   pair's paired 95% interval. Nothing is chosen on test.

``--dry`` plays the whole rule on one small world and the test set's seed 10 (figures
discarded, nothing shipped) to check it end to end.

Writes ``docs/results/wf_congested_trial_choice.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from multiprocessing import Pool

from make_zoo import ROOT, paired_rows, remeasure_card, ship_trial
from make_zoo_wf_congested_familiar import TRAINED, UNUSED
from make_zoo_wf_congested_families import UNSEEN_TASKS
from make_zoo_wf_congested_unseen import play

from rlsched.agents.export import write_card
from rlsched.splits import SPLITS
from rlsched.zoo import ZOO_DIR

ENV = "rlsched/WorkflowOffloading-v0"
NAME = "workflow-congested-vetted"
SETTINGS = {"anchor": "peft", "futures": 4, "horizon": "end", "every": 10, "significance": 1.0,
            "familiar": "off"}  # fmt: skip
ENTRY = f"learned:zoo/{NAME}"
GUARD = (f"{ENTRY}?familiar=off&trial=peft&trial_every=10&trial_futures=4&trial_horizon=end"
         "&trial_significance=1")  # fmt: skip
NAMES = {"heft": "heft", "peft": "peft", "E": ENTRY, "G": GUARD}
VAL_U = tuple(f"wfcommons:{f}&seed=34&workflows=4" for f in UNUSED)
VAL_T = tuple(f"wfcommons:{f}&seed=35&workflows=4" for f in TRAINED)
(U_SEED, U_N), (T_SEED, T_N), (TEST_SEED, TEST_N) = (75_100, 5), (75_200, 6), (31_000, 30)
PAIRS = [("G", "heft"), ("G", "peft"), ("G", "E"), ("E", "peft"), ("E", "heft"),
         ("peft", "heft")]  # fmt: skip
OUT = ROOT / "docs/results/wf_congested_trial_choice.json"
LINE = ("round C7 (docs/results/make_zoo_wf_congested_trial.py) ships a trial guard over PEFT "
        "that plays the network without its familiarity guard (meta.json trial)")  # fmt: skip


def kwargs(max_tasks: int | None = None) -> dict:
    """The entry's env arguments (``max_tasks``: a larger padding for the unused families)."""
    meta = json.loads((ZOO_DIR / NAME / "model/meta.json").read_text())
    kw = dict(meta["env_kwargs"])
    if max_tasks is not None:
        kw["dag_max_tasks"] = max_tasks
    return kw


def _episode(job: tuple[str, int, dict]) -> tuple[str, int, dict[str, float], float]:
    """One episode of every player (a pool's task): its mean completion per player."""
    data, seed, kw = job
    t = time.perf_counter()
    got = play(data, seed, 1, list(NAMES.values()), kw)
    return data, seed, {k: got[s][0] for k, s in NAMES.items()}, time.perf_counter() - t


def episodes(jobs: list[tuple[str, int, dict]]) -> dict[tuple[str, int], dict[str, float]]:
    """Each job's episode on two processes, the slowest first, printed as each ends."""
    out = {}
    with Pool(2) as pool:
        for data, seed, vals, sec in pool.imap_unordered(_episode, jobs):
            out[(data, seed)] = vals
            print(f"  {data} seed {seed}: " + ", ".join(f"{k} {v:.2f}" for k, v in vals.items())
                  + f" ({sec:.0f} s)", flush=True)  # fmt: skip
    return out


def validation(sets: dict[str, tuple[tuple[str, ...], int, int, dict]]) -> dict:
    """Validation sets ``label: (workloads, first seed, episodes each, env arguments)``: each
    episode relative to PEFT, the means, the best heuristic and the round's pairs."""
    jobs = [(d, s + i, kw) for data, s, n, kw in sets.values() for d in data for i in range(n)]
    got = episodes(jobs)
    out = {}
    for label, (data, s, n, _) in sets.items():
        rel = {k: [got[(d, s + i)][k] / got[(d, s + i)]["peft"] - 1.0 for d in data
                   for i in range(n)] for k in NAMES}  # fmt: skip
        means = {k: statistics.fmean(v) for k, v in rel.items()}
        print(f"validation {label}: means relative to PEFT {means}", flush=True)
        out[label] = {
            "workloads": list(data), "seeds": s, "episodes_each": n,
            "means_relative_to_peft": means,
            "best_heuristic": min(("heft", "peft"), key=lambda k: means[k]),
            "pairs": {f"{a}_vs_{b}": p for a, b, p in
                      paired_rows(rel, PAIRS, "mean_completion relative to peft")},
            "episode_values": rel,
            "raw": {f"{d} seed {s + i}": got[(d, s + i)] for d in data for i in range(n)},
        }  # fmt: skip
    return out


def test(first: int, n: int) -> dict:
    """The players on ``n`` episodes of the split's test set from seed ``first``."""
    data = SPLITS[ENV].test
    print(f"test: {n} episodes of {data}, seeds {first}+", flush=True)
    got = episodes([(data, first + i, kwargs()) for i in range(n)])
    own = {k: [got[(data, first + i)][k] for i in range(n)] for k in NAMES}
    return {"dataset": data, "seeds": [first, first + n - 1],
            "means": {k: statistics.fmean(v) for k, v in own.items()},
            "pairs": {f"{a}_vs_{b}": p for a, b, p in paired_rows(own, PAIRS, "mean_completion",
                                                                   " s")},
            "episode_values": own}  # fmt: skip


def main(dry: bool) -> None:
    t0 = time.perf_counter()
    meta = json.loads((ZOO_DIR / NAME / "model/meta.json").read_text())
    assert "trial" not in meta, "the entry as round C6 shipped it"
    if dry:
        sets = {"U": (("wfcommons:cycles?tasks=80&seed=99&workflows=1",), 10, 2,
                      kwargs(UNSEEN_TASKS)),
                "T": (("wfcommons:srasearch?tasks=40&seed=99&workflows=2",), 10, 2, kwargs())}
    else:
        sets = {"U": (VAL_U, U_SEED, U_N, kwargs(UNSEEN_TASKS)),
                "T": (VAL_T, T_SEED, T_N, kwargs())}  # fmt: skip
    out: dict = {"rule": "docs/results/make_zoo_wf_congested_trial.py", "settings": SETTINGS,
                 "players": NAMES, "dry": dry}  # fmt: skip
    out["validation"] = v = validation(sets)
    eligible = {f"not_worse_than_best_heuristic_{s}":
                v[s]["pairs"][f"G_vs_{v[s]['best_heuristic']}"]["verdict"] != "worse"
                for s in v}  # fmt: skip
    pooled = {k: statistics.fmean(v["U"]["episode_values"][k] + v["T"]["episode_values"][k])
              for k in ("E", "G")}  # fmt: skip
    ships = all(eligible.values()) and pooled["G"] < pooled["E"]
    out.update({"eligible": eligible, "validation_pooled_means": pooled, "ships": ships})
    print(f"eligible {eligible}; pooled {pooled}; G ships: {ships}", flush=True)
    out["test"] = test(10, 2) if dry else test(TEST_SEED, TEST_N)
    out["seconds"] = round(time.perf_counter() - t0)
    path = OUT.with_name("wf_congested_trial_dry.json") if dry else OUT
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"test means {out['test']['means']}; wrote {path} in {out['seconds']} s", flush=True)
    if ships and not dry:
        card = ship_trial(NAME, SETTINGS, (
            "round C7 (docs/results/make_zoo_wf_congested_trial.py): not significantly worse "
            "than the best heuristic on new workflows of three unused families (15 episodes, "
            f"seeds {U_SEED:,}+) or of the four training families (24, seeds {T_SEED:,}+), and "
            "a lower mean completion relative to PEFT than the entry without it over the 39"),
            LINE)  # fmt: skip
        remeasure_card(card, ENV, ENTRY, {**card["env_kwargs"], "scenario": card["preset"]},
                       "mean_completion")  # fmt: skip
        write_card(NAME, card)
        print(f"shipped: {ZOO_DIR / NAME}", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dry", action="store_true", help="the rule end to end on a small world")
    main(ap.parse_args().dry)
