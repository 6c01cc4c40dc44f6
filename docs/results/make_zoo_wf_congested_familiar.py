"""Issue 13, round C5: departure networks that keep PEFT's server on workflows unlike the ones
they learned from (a familiarity guard).

Why: rounds C2-C4 found the departure networks worth about 20% of mean completion on new
workflows of their training families and worse than PEFT on families no run trained on
(cycles, seismology, soykb), whatever the labels or the threshold; not by scale (soykb's
lies inside the training range, ``wf_congested_family_scale.py``). Round C4's record asks for
"a network that knows when a workflow is unlike its training graphs". Here that is a guard
(:mod:`rlsched.policies.familiarity`, new): a scale-free shape profile of each workflow (11
shares, ratios and spreads of its graph), the profiles of every training workflow, and a
radius, the largest distance from a training workflow to its nearest one in another training
dataset. The policy departs only where the current workflow lies within it. Nothing is
retrained.

    python docs/results/make_zoo_wf_congested_familiar.py   # about 20 min on two processes

The rule, fixed here (2026-12-05, before any guarded policy played an episode; only the
profiles' distances of the training and unused families had been looked at, not of the test
workflows, and no episode's outcome):

1. Candidates, each guarded by ``departure_familiar``'s guard of its own config
   (:func:`rlsched.train.departures.familiarity_of`: the workflows of its config's datasets
   and of its label runs'):
   A. ``entry``: the entry's own network (round C1, ``workflow-congested-departures``) at its
      own threshold;
   B. ``gated``: round C4's network, its threshold chosen in 2.
2. B's threshold: among round C4's eight quantiles and never departing, on 40 episodes of new
   workflows of four training families (``wfcommons:montage?tasks=60``,
   ``epigenomics?tasks=60``, ``genome?tasks=60``, ``srasearch?tasks=40``, each
   ``seed=26&workflows=4``; 10 episodes each, seeds 68,000+), scored by each episode's mean
   completion relative to PEFT's, averaged; kept: the lowest, equal ones to the higher
   threshold. Never departing is PEFT episode for episode (round C4's record), so it scores 0
   unplayed. Candidate A plays the same episodes (descriptive).
3. Eligible only if (a) its threshold departs, (b) it decides in under 0.2 ms, guarded and
   unguarded (median ``act`` over 300 states of PEFT's play on the test data, one core), and
   (c) it is not significantly worse than the best of HEFT and PEFT on either validation set
   of 4. (paired 95%).
4. Validation, two sets: U, 30 episodes of the three unused families with new workflows
   (``wfcommons:cycles?tasks=80``, ``seismology?tasks=110``, ``soykb?tasks=100``, each
   ``seed=27&workflows=4``; 10 each, seeds 69,000+); T, 40 episodes of the four training
   families of 2. with other new workflows (``seed=28``; 10 each, seeds 70,000+). HEFT, PEFT,
   the entry and both candidates, relative to PEFT, paired. Kept: the eligible candidate
   with the lowest mean over the 70 episodes, if lower than the entry's there; equal means go
   to the entry. A kept candidate becomes the entry ``workflow-congested-familiar`` and
   ``workflow-congested-departures`` goes to ``configs/zoo/start/``.
5. Test, whatever the choice: 30 fresh episodes of the split's test set (seeds
   29,000-29,029; no earlier run played them): HEFT, PEFT, the entry and both candidates,
   mean completion, each pair's paired 95% interval. Nothing is chosen on test.
6. Descriptive, after the test: each guard's distance of every workflow of the choice,
   validation and test workloads, so the record says which ones each candidate departs on.

Writes ``docs/results/wf_congested_familiar_choice.json``.
"""

from __future__ import annotations

import json
import shutil
import statistics
import time
from multiprocessing import Pool
from pathlib import Path

from make_zoo import ROOT, paired_rows
from make_zoo_wf_congested_departures import latency
from make_zoo_wf_congested_families import LATENCY_MS, PER_FAMILY, UNSEEN_TASKS, kwargs, ship
from make_zoo_wf_congested_unseen import halves, relative_to_peft

from rlsched.envs.make import make_env
from rlsched.policies.familiarity import Familiarity, dataset_profiles
from rlsched.splits import SPLITS
from rlsched.train import TrainConfig
from rlsched.train.departures import familiarity_of

ENV = "rlsched/WorkflowOffloading-v0"
SOURCES = {
    "entry": ROOT / "runs/zoo/workflow_offloading_congested_departures/seed0",
    "gated": ROOT / "runs/zoo/workflow_offloading_congested_gated/seed1",
}
HERE = ROOT / "runs/zoo/workflow_offloading_congested_familiar"
OLD, NEW = "workflow-congested-departures", "workflow-congested-familiar"
ROUND = "round C5 (docs/results/make_zoo_wf_congested_familiar.py)"
TRAINED = ("montage?tasks=60", "epigenomics?tasks=60", "genome?tasks=60", "srasearch?tasks=40")
UNUSED = ("cycles?tasks=80", "seismology?tasks=110", "soykb?tasks=100")
CHOICE = tuple(f"wfcommons:{f}&seed=26&workflows=4" for f in TRAINED)
VAL_U = tuple(f"wfcommons:{f}&seed=27&workflows=4" for f in UNUSED)
VAL_T = tuple(f"wfcommons:{f}&seed=28&workflows=4" for f in TRAINED)
CHOICE_SEED, VAL_U_SEED, VAL_T_SEED, TEST_SEED, TEST_EPISODES = 68_000, 69_000, 70_000, 29_000, 30
OUT = ROOT / "docs/results/wf_congested_familiar_choice.json"
PAIRS = [(c, b) for c in ("entry_guarded", "gated_guarded") for b in ("heft", "peft", "entry")]
PAIRS += [("gated_guarded", "entry_guarded"), ("entry", "peft"), ("entry", "heft"),
          ("peft", "heft")]  # fmt: skip


def candidate(name: str) -> Path:
    """Candidate ``name``'s run folder: its source run's record and model, the model's meta
    given the guard of the source's own config, and that config with ``departure_familiar``."""
    src, dest = SOURCES[name], HERE / name
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    shutil.copytree(src / "model", dest / "model")
    for f in ("run.json", "metrics.json"):
        shutil.copyfile(src / f, dest / f)
    (dest / "config.yaml").write_text(
        (src / "config.yaml").read_text() + "departure_familiar: true\n"
    )
    cfg = TrainConfig.from_dict(json.loads((src / "run.json").read_text())["config"])
    meta = json.loads((dest / "model/meta.json").read_text())
    meta["familiar"] = familiarity_of(cfg)
    (dest / "model/meta.json").write_text(json.dumps(meta, indent=2))
    return dest


def spec(run: Path, threshold: object = None, familiar: str | None = None) -> str:
    q = [f"threshold={threshold}"] if threshold is not None else []
    q += [f"familiar={familiar}"] if familiar else []
    return f"learned:{run / 'model'}" + ("?" + "&".join(q) if q else "")


def distances(runs: dict[str, Path], data: list[str]) -> dict[str, dict[str, list[float]]]:
    """Each guard's distance (and its radius) of every workflow of each workload in ``data``."""
    guards = {k: Familiarity.from_meta(json.loads((r / "model/meta.json").read_text())["familiar"])
              for k, r in runs.items()}  # fmt: skip
    kw = kwargs(UNSEEN_TASKS, runs["entry"])
    out: dict = {k: {"radius": g.radius} for k, g in guards.items()}
    for d in data:
        rows = dataset_profiles(lambda x: make_env(ENV, x, **kw), d)
        for k, g in guards.items():
            out[k][d] = [round(g.distance(r), 3) for r in rows]
    return out


def validate(
    names: dict[str, str], sets: tuple[tuple[tuple[str, ...], int], ...], kw: dict,
    pairs: list[tuple[str, str]],
) -> dict[str, dict]:
    """Validation sets U and T (in that order: workloads and first seed): each policy
    ``names`` maps to a spec, each episode's mean completion relative to PEFT's, the means,
    the best heuristic and ``pairs``. Round C6 validates through it too."""
    out = {}
    for label, (data, seed) in zip(("U", "T"), sets, strict=True):
        print(f"validation {label}: {len(data) * PER_FAMILY} episodes, seeds {seed}+", flush=True)
        specs = [s for k, s in names.items() if k != "peft"]
        val = relative_to_peft(data, seed, PER_FAMILY, specs, kw)[0]
        val["peft"] = [0.0] * len(val[specs[0]])
        own = {k: val[s] for k, s in names.items()}
        means = {k: statistics.fmean(v) for k, v in own.items()}
        out[label] = {
            "workloads": list(data), "seeds": seed, "means_relative_to_peft": means,
            "best_heuristic": min(("heft", "peft"), key=lambda k: means[k]),
            "pairs": {f"{a}_vs_{b}": p for a, b, p in
                      paired_rows(own, pairs, "mean_completion relative to peft")},
            "episode_values": own,
        }  # fmt: skip
    return out


def test_set(names: dict[str, str], first: int, kw: dict, pairs: list[tuple[str, str]]) -> dict:
    """The policies ``names`` maps to specs on ``TEST_EPISODES`` episodes of the split's test
    set from seed ``first``: means, ``pairs`` and each episode's mean completion."""
    print(f"test: {TEST_EPISODES} episodes of {SPLITS[ENV].test}, seeds {first}+", flush=True)
    test = halves(SPLITS[ENV].test, first, TEST_EPISODES, list(names.values()), kw)
    own = {k: test[s] for k, s in names.items()}
    return {"dataset": SPLITS[ENV].test, "seeds": [first, first + TEST_EPISODES - 1],
            "means": {k: statistics.fmean(v) for k, v in own.items()},
            "pairs": {f"{a}_vs_{b}": p for a, b, p in
                      paired_rows(own, pairs, "mean_completion", " s")},
            "episode_values": own}  # fmt: skip


def main() -> None:
    t0 = time.time()
    runs = {k: candidate(k) for k in SOURCES}
    meta = {k: json.loads((r / "model/meta.json").read_text()) for k, r in runs.items()}
    out: dict = {
        "sources": {k: str(v.relative_to(ROOT)) for k, v in SOURCES.items()},
        "guards": {k: {"radius": m["familiar"]["radius"], "datasets": m["familiar"]["datasets"],
                       "workflows": len(m["familiar"]["reference"])} for k, m in meta.items()},
    }  # fmt: skip
    print(f"guards {out['guards']}", flush=True)
    kw = kwargs(UNSEEN_TASKS, runs["entry"])

    # 2. B's threshold on new workflows of training families
    tried = [r["threshold"] for r in meta["gated"]["threshold_choice"]]
    specs = {t: spec(runs["gated"], t) for t in tried if t != "inf"}
    a_spec = spec(runs["entry"])
    print(f"thresholds {tried} on {len(CHOICE) * PER_FAMILY} episodes, seeds {CHOICE_SEED}+")
    rel = relative_to_peft(CHOICE, CHOICE_SEED, PER_FAMILY, [*specs.values(), a_spec], kw)[0]
    table = [{"threshold": t, "mean_relative_to_peft": statistics.fmean(rel[specs[t]]) if t in specs
              else 0.0} for t in tried]  # fmt: skip
    for row in table:
        print(f"  threshold {row['threshold']}: {row['mean_relative_to_peft']:+.5f}", flush=True)
    kept = min(table, key=lambda r: (r["mean_relative_to_peft"], -float(r["threshold"])))
    out["threshold_choice"], out["kept_threshold"] = table, kept["threshold"]
    out["entry_guarded_on_choice"] = statistics.fmean(rel[a_spec])
    print(f"kept {kept['threshold']}; candidate A there {out['entry_guarded_on_choice']:+.5f}")
    thresholds = {"entry_guarded": meta["entry"]["threshold"], "gated_guarded": kept["threshold"]}
    cands = {"entry_guarded": spec(runs["entry"], thresholds["entry_guarded"]),
             "gated_guarded": spec(runs["gated"], thresholds["gated_guarded"])}  # fmt: skip
    run_of = {"entry_guarded": runs["entry"], "gated_guarded": runs["gated"]}

    # 3b. latency, guarded and not, in a fresh process pinned to one core
    out["latency"] = {}
    for c, run in run_of.items():
        with Pool(1) as pool:
            out["latency"][c] = {f: pool.apply(latency, (run, f)) for f in ("on", "off")}
    print(f"latency {out['latency']}", flush=True)

    # 4. validation
    entry = f"learned:zoo/{OLD}"
    names = {"heft": "heft", "peft": "peft", "entry": entry, **cands}
    out["validation"] = validate(names, ((VAL_U, VAL_U_SEED), (VAL_T, VAL_T_SEED)), kw, PAIRS)
    pooled = {k: statistics.fmean(out["validation"]["U"]["episode_values"][k]
                                  + out["validation"]["T"]["episode_values"][k])
              for k in names}  # fmt: skip
    eligible = {}
    for c in cands:
        v = out["validation"]
        eligible[c] = {
            "departs": thresholds[c] != "inf",
            "under_latency": all(x["median_ms"] < LATENCY_MS for x in out["latency"][c].values()),
            **{f"not_worse_than_best_heuristic_{s}":
               v[s]["pairs"][f"{c}_vs_{v[s]['best_heuristic']}"]["verdict"] != "worse"
               for s in ("U", "T")},
        }  # fmt: skip
    ok = [c for c in cands if all(eligible[c].values())]
    best = min(ok, key=lambda c: pooled[c]) if ok else None
    keep = best is not None and pooled[best] < pooled["entry"]
    out.update({"validation_pooled_means": pooled, "eligible": eligible, "kept": best,
                "replaces": keep})  # fmt: skip
    print(f"pooled {pooled}; eligible {eligible}; kept {best}; replaces the entry: {keep}")

    # 5. test, whatever the choice
    out["test"] = test_set(names, TEST_SEED, kwargs(run_dir=runs["entry"]), PAIRS)

    # 6. descriptive: which workflows each guard calls familiar
    out["distances"] = distances(runs, [*CHOICE, *VAL_U, *VAL_T, SPLITS[ENV].test])
    out["seconds"] = round(time.time() - t0)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"test means {out['test']['means']}; wrote {OUT} in {out['seconds']} s", flush=True)
    if keep:
        assert best is not None
        out["kept_threshold"] = thresholds[best]
        if best == "entry_guarded":  # its threshold is its trainer's, chosen on its validation
            out["threshold_choice"] = meta["entry"]["threshold_choice"]
        out["validation"]["pairs"] = {
            "candidate_vs_entry": out["validation"]["U"]["pairs"][f"{best}_vs_entry"]}
        ship(out, run_of[best], NEW, ROUND, VAL_U_SEED, choice=CHOICE, selected_by=(
            f"the entry's network ({'round C1' if best == 'entry_guarded' else 'round C4'}) "
            f"at threshold {thresholds[best]} with a familiarity guard of its training "
            f"workflows; decides in under {LATENCY_MS} ms guarded or not, not significantly "
            "worse than the best heuristic on 30 fresh episodes of three unused families "
            f"(seeds {VAL_U_SEED:,}+) or on 40 of four training families (seeds "
            f"{VAL_T_SEED:,}+), and a lower mean completion relative to PEFT than {OLD} over "
            "the 70"), threshold_note=(
            "the trainer's own" if best == "entry_guarded"
            else "re-chosen by the round\n# on four training families' new workflows"))  # fmt: skip


if __name__ == "__main__":
    main()
