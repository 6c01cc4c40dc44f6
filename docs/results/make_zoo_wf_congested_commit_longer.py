"""Issue 13, round C9: longer committed blocks for the WorkflowOffloading ``congested`` entry's
trial guard, after round C8's 10 decisions were not kept.

Why: round C8 (``make_zoo_wf_congested_commit.py``) found a guard whose network rollouts are
committed to 10 decisions, then PEFT, not significantly worse than round C7's guard over its
39 validation episodes but 0.78 points of PEFT's mean completion behind it (C7's guard
-3.63%, the committed one -2.85%), almost all of it on the epigenomics and montage graphs of
the training families, where the network's departures pay over many decisions; so it was
not kept. Longer blocks keep more of that at less of the cost of rollouts to the episode's
end. Nothing is trained or tuned here.

    python docs/results/make_zoo_wf_congested_commit_longer.py   # about 20 min on two processes

The rule, fixed here (2026-12-06, before any episode of it was played):

1. Candidates: K30 and K60, round C7's guard with ``commit: 30`` and ``commit: 60``.
2. Validation: round C8's 39 episodes (the same workloads and seeds; this reuses them, and
   round C8's values of HEFT, PEFT and round C7's guard G, which the same code plays the
   same). Each episode's mean completion relative to PEFT's on it; paired 95% intervals.
3. The shorter block ships if it meets round C8's three conditions: (a) not significantly
   worse than the best of HEFT and PEFT on U and on T, (b) over the 39 not significantly
   worse than G, (c) its mean there at most 0.25 points of PEFT's mean completion above G's;
   else the longer one if it does; else neither. Shipping: the entry's ``meta.json``
   ``trial`` gains ``commit``, its card is measured again on its own episodes.
4. Test, whatever the choice: round C8's 30 test episodes (seeds 32,000-32,029; its figures
   of HEFT, PEFT, G and the 10-decision guard reused) for K30 and K60. Nothing is chosen on
   test.

Writes ``docs/results/wf_congested_commit_longer_choice.json``.
"""

from __future__ import annotations

import json
import statistics
import time
from multiprocessing import Pool

from make_zoo import ROOT, paired_rows, remeasure_card, ship_trial
from make_zoo_wf_congested_commit import ENTRY, ENV, NAME, SETTINGS, TOLERANCE
from make_zoo_wf_congested_unseen import play

from rlsched.agents.export import write_card
from rlsched.zoo import ZOO_DIR

C8 = ROOT / "docs/results/wf_congested_commit_choice.json"
NEW = {"K30": f"{ENTRY}?trial_commit=30", "K60": f"{ENTRY}?trial_commit=60"}
OUT = ROOT / "docs/results/wf_congested_commit_longer_choice.json"


def _episode(job: tuple[str, int, dict]) -> tuple[str, int, dict[str, float], dict[str, float]]:
    """One episode of each new player (a pool's task): mean completion and seconds."""
    data, seed, kw = job
    vals, secs = {}, {}
    for k, spec in NEW.items():
        t = time.perf_counter()
        vals[k] = play(data, seed, 1, [spec], kw)[spec][0]
        secs[k] = time.perf_counter() - t
    return data, seed, vals, secs


def episodes(jobs: list[tuple[str, int, dict]]) -> dict[str, dict]:
    """Each job's episode on two processes, by ``"DATA seed N"``, printed as each ends."""
    out = {}
    with Pool(2) as pool:
        for data, seed, vals, secs in pool.imap_unordered(_episode, jobs):
            out[f"{data} seed {seed}"] = {"values": vals, "seconds": secs}
            print(f"  {data} seed {seed}: " + ", ".join(
                f"{k} {v:.2f} ({secs[k]:.1f} s)" for k, v in vals.items()), flush=True)
    return out


def meets(rel: dict[str, dict[str, list[float]]], best: dict[str, str], k: str) -> dict:
    """Round C8's conditions for player ``k`` on the sets' values relative to PEFT."""
    out = {f"not_worse_than_best_heuristic_{s}":
           paired_rows(rel[s], [(k, best[s])], "relative")[0][2]["verdict"] != "worse"
           for s in rel}  # fmt: skip
    pooled = {p: rel["U"][p] + rel["T"][p] for p in (k, "G")}
    vs_g = paired_rows(pooled, [(k, "G")], "mean_completion relative to peft")[0][2]
    out["not_worse_than_G_pooled"] = vs_g["verdict"] != "worse"
    out["mean_within_tolerance_of_G"] = (
        statistics.fmean(pooled[k]) <= statistics.fmean(pooled["G"]) + TOLERANCE)
    return {"conditions": out, "vs_G": vs_g, "pooled_mean": statistics.fmean(pooled[k]),
            "meets": all(out.values())}  # fmt: skip


def main() -> None:
    t0 = time.perf_counter()
    c8 = json.loads(C8.read_text())
    meta = json.loads((ZOO_DIR / NAME / "model/meta.json").read_text())
    assert "commit" not in meta["trial"] and not c8["ships"], "the entry as round C7 shipped it"
    from make_zoo_wf_congested_commit import kwargs
    from make_zoo_wf_congested_families import UNSEEN_TASKS

    sets = c8["validation"]
    kw = {"U": kwargs(UNSEEN_TASKS), "T": kwargs()}
    jobs = [(d, sets[s]["seeds"] + i, kw[s]) for s in ("U", "T") for d in sets[s]["workloads"]
            for i in range(sets[s]["episodes_each"])]  # fmt: skip
    got = episodes(jobs)
    out: dict = {"rule": "docs/results/make_zoo_wf_congested_commit_longer.py", "players": NEW,
                 "validation": {}}  # fmt: skip
    rel, best = {}, {}
    for s in ("U", "T"):
        keys = [f"{d} seed {sets[s]['seeds'] + i}" for d in sets[s]["workloads"]
                for i in range(sets[s]["episodes_each"])]  # fmt: skip
        rel[s] = {**sets[s]["episode_values"],
                  **{k: [got[j]["values"][k] / sets[s]["raw"][j]["values"]["peft"] - 1.0
                         for j in keys] for k in NEW}}  # fmt: skip
        best[s] = sets[s]["best_heuristic"]
        out["validation"][s] = {
            "means_relative_to_peft": {k: statistics.fmean(v) for k, v in rel[s].items()},
            "seconds": {k: sum(got[j]["seconds"][k] for j in keys) for k in NEW},
            "episode_values": {k: rel[s][k] for k in NEW}, "raw": {j: got[j] for j in keys}}
        print(f"validation {s}: {out['validation'][s]['means_relative_to_peft']}", flush=True)
    out["checks"] = {k: meets(rel, best, k) for k in NEW}
    chosen = next((k for k in NEW if out["checks"][k]["meets"]), None)
    out["chosen"] = chosen
    print(f"checks {json.dumps({k: v['conditions'] for k, v in out['checks'].items()})}; "
          f"chosen: {chosen}", flush=True)  # fmt: skip
    test = c8["test"]
    first, last = test["seeds"]
    got = episodes([(test["dataset"], s, kwargs()) for s in range(first, last + 1)])
    own = {**test["episode_values"],
           **{k: [got[f"{test['dataset']} seed {s}"]["values"][k] for s in range(first, last + 1)]
              for k in NEW}}  # fmt: skip
    pairs = [(k, b) for k in NEW for b in ("heft", "peft", "G")]
    out["test"] = {
        "dataset": test["dataset"], "seeds": test["seeds"],
        "means": {k: statistics.fmean(v) for k, v in own.items()},
        "pairs": {f"{a}_vs_{b}": p for a, b, p in paired_rows(own, pairs, "mean_completion",
                                                               " s")},
        "seconds": {**test["seconds"],
                    **{k: sum(v["seconds"][k] for v in got.values()) for k in NEW}},
        "episode_values": {k: own[k] for k in NEW}}  # fmt: skip
    out["seconds"] = round(time.perf_counter() - t0)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"test means {out['test']['means']}; wrote {OUT} in {out['seconds']} s", flush=True)
    if chosen is not None:
        commit = int(NEW[chosen].rsplit("=", 1)[1])
        card = ship_trial(NAME, {**SETTINGS, "commit": commit}, (
            f"round C9 (docs/results/make_zoo_wf_congested_commit_longer.py): round C7's guard "
            f"with its network rollouts committed to {commit} decisions, the shorter of 30 and "
            "60 that is not significantly worse than the best heuristic on round C8's "
            "validation sets (15 episodes of three unused families, 24 of the training ones), "
            "nor than round C7's guard over the 39, its mean within 0.25 points of PEFT's of "
            "it; round C7: " + json.loads((ZOO_DIR / NAME / "card.json").read_text())[
                "trial_chosen_by"]),
            f"round C9 (docs/results/make_zoo_wf_congested_commit_longer.py) commits the "
            f"trial's network rollouts to {commit} decisions (meta.json trial commit)")  # fmt: skip
        remeasure_card(card, ENV, ENTRY, {**card["env_kwargs"], "scenario": card["preset"]},
                       "mean_completion")  # fmt: skip
        write_card(NAME, card)
        print(f"shipped: {ZOO_DIR / NAME}", flush=True)


if __name__ == "__main__":
    main()
