"""Issue 13, round C8: the WorkflowOffloading ``congested`` entry's trial guard with its
candidate's rollouts committed to one block of decisions.

Why: the entry's guard (round C7) plays the network and PEFT over 4 sampled futures to the
episode's end every 10 decisions; PEFT's rollouts are compiled, the network's are stepped, and
they are most of the zoo stage's largest task (46 s of its 163 s of work on 2026-12-06). With
``commit: 10`` (new, ``rlsched.policies.trial``) a candidate's rollout plays the network for
the 10 decisions the trial decides, then PEFT, compiled, to the end: the trial weighs what it
decides (the network until the next trial) against PEFT throughout, a rollout step of policy
improvement over PEFT one block long. One look before this rule, two episodes of
``wfcommons:srasearch?tasks=40&seed=99&workflows=2`` (seed 99, no set below): 17.6 s against
3.3 s. Nothing is trained or tuned here.

    python docs/results/make_zoo_wf_congested_commit.py [--dry]   # about 40 min on two processes

The rule, fixed here (2026-12-06, before any episode of it was played):

1. Candidates: G, the entry as shipped (round C7's guard); K, the same guard with
   ``commit: 10``.
2. Validation, two sets, fresh workflows and seeds: U, the three unused families
   (``cycles?tasks=80``, ``seismology?tasks=110``, ``soykb?tasks=100``, each
   ``seed=36&workflows=4``, ``dag_max_tasks: 112``; 5 episodes each, seeds 75,300+); T, the
   four training families (``montage?tasks=60``, ``epigenomics?tasks=60``,
   ``genome?tasks=60``, ``srasearch?tasks=40``, each ``seed=37&workflows=4``; 6 episodes
   each, seeds 75,400+). HEFT, PEFT, G and K; each episode's mean completion relative to
   PEFT's on it; paired 95% intervals; each episode's seconds per player.
3. K ships if (a) it is not significantly worse than the best of HEFT and PEFT (the lower
   mean on that set) on U and on T, (b) over the 39 episodes it is not significantly worse
   than G, and (c) its mean there is at most 0.25 points of PEFT's mean completion above G's.
   K plays a fraction of G's network steps: a guard not measurably worse is the one the
   zoo stage and a deployment can afford. Shipping K: the entry's ``meta.json`` ``trial``
   gains ``commit: 10``, its card is measured again on its own episodes.
4. Test, whatever the choice: 30 fresh episodes of the split's test set (seeds
   32,000-32,029; no earlier run played them): HEFT, PEFT, G and K, mean completion, each
   pair's paired 95% interval. Nothing is chosen on test.

``--dry`` plays the whole rule on one small world and the test set's seed 10 (figures
discarded, nothing shipped) to check it end to end.

Writes ``docs/results/wf_congested_commit_choice.json``.
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
from make_zoo_wf_congested_trial import kwargs  # the entry's env arguments
from make_zoo_wf_congested_unseen import play

from rlsched.agents.export import write_card
from rlsched.splits import SPLITS
from rlsched.zoo import ZOO_DIR

ENV = "rlsched/WorkflowOffloading-v0"
NAME = "workflow-congested-vetted"
SETTINGS = {"anchor": "peft", "futures": 4, "horizon": "end", "every": 10, "significance": 1.0,
            "familiar": "off", "commit": 10}  # fmt: skip
ENTRY = f"learned:zoo/{NAME}"
NAMES = {"heft": "heft", "peft": "peft", "G": ENTRY, "K": f"{ENTRY}?trial_commit=10"}
VAL_U = tuple(f"wfcommons:{f}&seed=36&workflows=4" for f in UNUSED)
VAL_T = tuple(f"wfcommons:{f}&seed=37&workflows=4" for f in TRAINED)
(U_SEED, U_N), (T_SEED, T_N), (TEST_SEED, TEST_N) = (75_300, 5), (75_400, 6), (32_000, 30)
PAIRS = [("K", "heft"), ("K", "peft"), ("K", "G"), ("G", "peft"), ("G", "heft"),
         ("peft", "heft")]  # fmt: skip
#: (c): K's pooled mean relative to PEFT at most this far above G's
TOLERANCE = 0.0025
OUT = ROOT / "docs/results/wf_congested_commit_choice.json"
LINE = ("round C8 (docs/results/make_zoo_wf_congested_commit.py) commits the trial's network "
        "rollouts to one block of 10 decisions (meta.json trial commit)")  # fmt: skip


def _episode(job: tuple[str, int, dict]) -> tuple[str, int, dict[str, float], dict[str, float]]:
    """One episode of every player (a pool's task): its mean completion and seconds per
    player."""
    data, seed, kw = job
    vals, secs = {}, {}
    for k, spec in NAMES.items():
        t = time.perf_counter()
        vals[k] = play(data, seed, 1, [spec], kw)[spec][0]
        secs[k] = time.perf_counter() - t
    return data, seed, vals, secs


def episodes(jobs: list[tuple[str, int, dict]]) -> dict[tuple[str, int], dict]:
    """Each job's episode on two processes, printed as each ends."""
    out = {}
    with Pool(2) as pool:
        for data, seed, vals, secs in pool.imap_unordered(_episode, jobs):
            out[(data, seed)] = {"values": vals, "seconds": secs}
            print(f"  {data} seed {seed}: " + ", ".join(
                f"{k} {v:.2f} ({secs[k]:.1f} s)" for k, v in vals.items()), flush=True)
    return out


def validation(sets: dict[str, tuple[tuple[str, ...], int, int, dict]]) -> dict:
    """Validation sets ``label: (workloads, first seed, episodes each, env arguments)``: each
    episode relative to PEFT, the means, the best heuristic and the round's pairs."""
    jobs = [(d, s + i, kw) for data, s, n, kw in sets.values() for d in data for i in range(n)]
    got = episodes(jobs)
    out = {}
    for label, (data, s, n, _) in sets.items():
        keys = [(d, s + i) for d in data for i in range(n)]
        rel = {k: [got[j]["values"][k] / got[j]["values"]["peft"] - 1.0 for j in keys]
               for k in NAMES}  # fmt: skip
        means = {k: statistics.fmean(v) for k, v in rel.items()}
        print(f"validation {label}: means relative to PEFT {means}", flush=True)
        out[label] = {
            "workloads": list(data), "seeds": s, "episodes_each": n,
            "means_relative_to_peft": means,
            "best_heuristic": min(("heft", "peft"), key=lambda k: means[k]),
            "pairs": {f"{a}_vs_{b}": p for a, b, p in
                      paired_rows(rel, PAIRS, "mean_completion relative to peft")},
            "episode_values": rel,
            "seconds": {k: sum(got[j]["seconds"][k] for j in keys) for k in NAMES},
            "raw": {f"{d} seed {i}": got[(d, i)] for d, i in keys},
        }  # fmt: skip
    return out


def test(first: int, n: int) -> dict:
    """The players on ``n`` episodes of the split's test set from seed ``first``."""
    data = SPLITS[ENV].test
    print(f"test: {n} episodes of {data}, seeds {first}+", flush=True)
    got = episodes([(data, first + i, kwargs()) for i in range(n)])
    keys = [(data, first + i) for i in range(n)]
    own = {k: [got[j]["values"][k] for j in keys] for k in NAMES}
    return {"dataset": data, "seeds": [first, first + n - 1],
            "means": {k: statistics.fmean(v) for k, v in own.items()},
            "pairs": {f"{a}_vs_{b}": p for a, b, p in paired_rows(own, PAIRS, "mean_completion",
                                                                   " s")},
            "seconds": {k: sum(got[j]["seconds"][k] for j in keys) for k in NAMES},
            "episode_values": own}  # fmt: skip


def main(dry: bool) -> None:
    t0 = time.perf_counter()
    meta = json.loads((ZOO_DIR / NAME / "model/meta.json").read_text())
    assert "commit" not in meta["trial"], "the entry as round C7 shipped it"
    if dry:
        sets = {"U": (("wfcommons:cycles?tasks=80&seed=99&workflows=1",), 10, 2,
                      kwargs(UNSEEN_TASKS)),
                "T": (("wfcommons:srasearch?tasks=40&seed=99&workflows=2",), 10, 2, kwargs())}
    else:
        sets = {"U": (VAL_U, U_SEED, U_N, kwargs(UNSEEN_TASKS)),
                "T": (VAL_T, T_SEED, T_N, kwargs())}  # fmt: skip
    out: dict = {"rule": "docs/results/make_zoo_wf_congested_commit.py", "settings": SETTINGS,
                 "players": NAMES, "dry": dry}  # fmt: skip
    out["validation"] = v = validation(sets)
    eligible = {f"not_worse_than_best_heuristic_{s}":
                v[s]["pairs"][f"K_vs_{v[s]['best_heuristic']}"]["verdict"] != "worse"
                for s in v}  # fmt: skip
    pooled = {k: v["U"]["episode_values"][k] + v["T"]["episode_values"][k] for k in NAMES}
    print("pooled over both sets:", flush=True)
    vs_g = paired_rows(pooled, [("K", "G")], "mean_completion relative to peft")[0][2]
    means = {k: statistics.fmean(pooled[k]) for k in ("G", "K")}
    eligible["not_worse_than_G_pooled"] = vs_g["verdict"] != "worse"
    eligible["mean_within_tolerance_of_G"] = means["K"] <= means["G"] + TOLERANCE
    ships = all(eligible.values())
    out.update({"eligible": eligible, "validation_pooled_means": means,
                "validation_pooled_K_vs_G": vs_g, "ships": ships})  # fmt: skip
    print(f"eligible {eligible}; pooled {means}; K ships: {ships}", flush=True)
    out["test"] = test(10, 2) if dry else test(TEST_SEED, TEST_N)
    out["seconds"] = round(time.perf_counter() - t0)
    path = OUT.with_name("wf_congested_commit_dry.json") if dry else OUT
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"test means {out['test']['means']}; wrote {path} in {out['seconds']} s", flush=True)
    if ships and not dry:
        card = ship_trial(NAME, SETTINGS, (
            "round C8 (docs/results/make_zoo_wf_congested_commit.py): round C7's guard with its "
            "network rollouts committed to 10 decisions; not significantly worse than the best "
            f"heuristic on new workflows of three unused families (15 episodes, seeds "
            f"{U_SEED:,}+) or of the four training families (24, seeds {T_SEED:,}+), nor than "
            "round C7's guard over the 39, its mean within 0.25 points of PEFT's of it; round "
            "C7: " + json.loads((ZOO_DIR / NAME / "card.json").read_text())["trial_chosen_by"]),
            LINE)  # fmt: skip
        remeasure_card(card, ENV, ENTRY, {**card["env_kwargs"], "scenario": card["preset"]},
                       "mean_completion")  # fmt: skip
        write_card(NAME, card)
        print(f"shipped: {ZOO_DIR / NAME}", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dry", action="store_true", help="the rule end to end on a small world")
    main(ap.parse_args().dry)
