"""Issue 13, round C6: the entry's network with a familiarity guard vetted on new workflows.

Why: round C5's guard (``make_zoo_wf_congested_familiar.py``) kept PEFT's server on the
families whose shape lies far from every training graph (seismology, soykb, both test
families), but shape was not enough. The entry's departures lost on new graphs of cycles (an
unused family inside the guard's radius, +0.54% against PEFT) and of montage (a training
family, +23.6%). They won on new graphs of epigenomics, genome and srasearch in all thirty
episodes. So the guard should know where the departures pay, not only what they have seen.
``departure_vet_datasets`` (new, :func:`rlsched.policies.familiarity.vet`): the guarded model
plays new workloads beside PEFT; each training workflow takes the outcomes of the workloads
whose graphs lie nearest to it, and stays open to departures only where they paid on
average. Nothing is retrained.

    python docs/results/make_zoo_wf_congested_vetted.py   # about 10 min on two processes

The rule, fixed here (2026-12-05, before any episode of the round was played):

1. Candidate: the entry's network (round C1, ``workflow-congested-departures``) at its own
   threshold, with round C5's guard (its config's workflows, radius 3.55), vetted on 70
   episodes of new workflows: the four training families (``wfcommons:montage?tasks=60``,
   ``epigenomics?tasks=60``, ``genome?tasks=60``, ``srasearch?tasks=40``) and the three unused
   ones (``cycles?tasks=80``, ``seismology?tasks=110``, ``soykb?tasks=100``), each
   ``seed=29&workflows=4``, 10 episodes each from seed 71,000.
2. Eligible only if (a) some training workflow stays open (it departs somewhere), (b) it
   decides in under 0.2 ms, guarded and unguarded (median ``act`` over 300 states of PEFT's
   play on the test data, one core), and (c) it is not significantly worse than the best of
   HEFT and PEFT on either validation set of 3. (paired 95%).
3. Validation, two sets: U, 30 episodes of the three unused families with other new workflows
   (``seed=30``; 10 each, seeds 72,000+); T, 40 episodes of the four training families
   (``seed=31``; 10 each, seeds 73,000+). HEFT, PEFT, the entry and the candidate, relative to
   PEFT, paired. Kept: an eligible candidate with a lower mean over the 70 episodes than the
   entry's; equal means go to the entry. A kept candidate becomes the entry
   ``workflow-congested-vetted`` and ``workflow-congested-departures`` goes to
   ``configs/zoo/start/``.
4. Test, whatever the choice: 30 fresh episodes of the split's test set (seeds
   30,000-30,029; no earlier run played them): HEFT, PEFT, the entry and the candidate, mean
   completion, each pair's paired 95% interval. Nothing is chosen on test.
5. Descriptive: which training workflows stay open, the validation by family, and each
   workflow's distance to its nearest training workflow (after the test).

Writes ``docs/results/wf_congested_vetted_choice.json``.
"""

from __future__ import annotations

import json
import shutil
import statistics
import time
from multiprocessing import Pool

from make_zoo import ROOT
from make_zoo_wf_congested_departures import latency
from make_zoo_wf_congested_familiar import (
    HERE,
    TRAINED,
    UNUSED,
    candidate,
    distances,
    spec,
    test_set,
    validate,
)
from make_zoo_wf_congested_families import LATENCY_MS, PER_FAMILY, UNSEEN_TASKS, kwargs, ship
from wf_congested_familiar_by_family import by_family

from rlsched.splits import SPLITS
from rlsched.train import TrainConfig
from rlsched.train.departures import vet_guard

ENV = "rlsched/WorkflowOffloading-v0"
OLD, NEW = "workflow-congested-departures", "workflow-congested-vetted"
ROUND = "round C6 (docs/results/make_zoo_wf_congested_vetted.py)"
VET = tuple(f"wfcommons:{f}&seed=29&workflows=4" for f in (*TRAINED, *UNUSED))
VAL_U = tuple(f"wfcommons:{f}&seed=30&workflows=4" for f in UNUSED)
VAL_T = tuple(f"wfcommons:{f}&seed=31&workflows=4" for f in TRAINED)
VET_SEED, VAL_U_SEED, VAL_T_SEED, TEST_SEED = 71_000, 72_000, 73_000, 30_000  # 30 test episodes
VETTING = {"departure_vet_datasets": list(VET), "departure_vet_episodes": PER_FAMILY,
           "departure_vet_seed": VET_SEED,
           "departure_vet_env_kwargs": {"dag_max_tasks": UNSEEN_TASKS}}  # fmt: skip
OUT = ROOT / "docs/results/wf_congested_vetted_choice.json"
PAIRS = [("candidate", "heft"), ("candidate", "peft"), ("candidate", "entry"),
         ("entry", "peft"), ("entry", "heft"), ("peft", "heft")]  # fmt: skip


def vetted_candidate():
    """The entry's run with round C5's guard (:func:`candidate`), moved to its own folder and
    vetted as ``VETTING`` says (the trainer's :func:`vet_guard`); its config gains the same
    fields, so ``rlsched train`` reproduces it."""
    run = candidate("entry")
    dest = HERE / "vetted"
    if dest.exists():
        shutil.rmtree(dest)
    run.rename(dest)
    record = json.loads((dest / "run.json").read_text())
    cfg = TrainConfig.from_dict({**record["config"], "departure_familiar": True, **VETTING})
    meta_path = dest / "model/meta.json"
    meta = json.loads(meta_path.read_text())
    meta["familiar"], meta["vetting"] = vet_guard(cfg, dest / "model", meta["threshold"], True)
    meta_path.write_text(json.dumps(meta, indent=2))
    (dest / "config.yaml").write_text(
        (dest / "config.yaml").read_text()
        + "".join(f"{k}: {json.dumps(v)}\n" for k, v in VETTING.items())
    )
    return dest, meta


def main() -> None:
    t0 = time.time()
    run, meta = vetted_candidate()
    open_ = meta["familiar"]["open"]
    out: dict = {"source": "runs/zoo/workflow_offloading_congested_departures/seed0",
                 "run": str(run.relative_to(ROOT)), "radius": meta["familiar"]["radius"],
                 "threshold": meta["threshold"], "open": open_, "vetting": meta["vetting"],
                 "vet_seed": VET_SEED}  # fmt: skip
    print(f"open: {sum(open_)} of {len(open_)} training workflows", flush=True)
    kw = kwargs(UNSEEN_TASKS, run)
    cand = spec(run)
    with Pool(1) as pool:  # a fresh process pinned to one core
        out["latency"] = {f: pool.apply(latency, (run, f)) for f in ("on", "off")}
    print(f"latency {out['latency']}", flush=True)

    entry = f"learned:zoo/{OLD}"
    names = {"heft": "heft", "peft": "peft", "entry": entry, "candidate": cand}
    out["validation"] = validate(names, ((VAL_U, VAL_U_SEED), (VAL_T, VAL_T_SEED)), kw, PAIRS)
    v = out["validation"]
    pooled = {k: statistics.fmean(v["U"]["episode_values"][k] + v["T"]["episode_values"][k])
              for k in names}  # fmt: skip
    eligible = {
        "departs": any(open_),
        "under_latency": all(x["median_ms"] < LATENCY_MS for x in out["latency"].values()),
        **{f"not_worse_than_best_heuristic_{s}":
           v[s]["pairs"][f"candidate_vs_{v[s]['best_heuristic']}"]["verdict"] != "worse"
           for s in ("U", "T")},
    }  # fmt: skip
    keep = all(eligible.values()) and pooled["candidate"] < pooled["entry"]
    out.update({"validation_pooled_means": pooled, "eligible": eligible, "replaces": keep})
    print(f"pooled {pooled}; eligible {eligible}; replaces the entry: {keep}", flush=True)

    out["test"] = test_set(names, TEST_SEED, kwargs(run_dir=run), PAIRS)
    out["by_family"] = {s: {w: {k: {x: p[x] for x in ("mean_diff", "ci95", "verdict")}
                                for k, p in rows.items()} for w, rows in part.items()}
                        for s, part in by_family(out).items()}  # fmt: skip
    out["distances"] = distances({"entry": run}, [*VET, *VAL_U, *VAL_T, SPLITS[ENV].test])
    out["seconds"] = round(time.time() - t0)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"test means {out['test']['means']}; wrote {OUT} in {out['seconds']} s", flush=True)
    if keep:
        out["kept_threshold"] = meta["threshold"]
        out["threshold_choice"] = meta["threshold_choice"]  # its trainer's, on its validation
        out["validation"]["pairs"] = {"candidate_vs_entry": v["U"]["pairs"]["candidate_vs_entry"]}
        ship(out, run, NEW, ROUND, VAL_U_SEED, choice=VET, threshold_note="the trainer's own",
             selected_by=(
                 f"the entry's network (round C1) at its threshold {meta['threshold']} with a "
                 "familiarity guard of its training workflows, vetted on 70 episodes of new "
                 f"workflows of seven families (seeds {VET_SEED:,}+); decides in under "
                 f"{LATENCY_MS} ms guarded or not, not significantly worse than the best "
                 f"heuristic on 30 fresh episodes of three unused families (seeds "
                 f"{VAL_U_SEED:,}+) or on 40 of four training families (seeds {VAL_T_SEED:,}+), "
                 f"and a lower mean completion relative to PEFT than {OLD} over the 70"))


if __name__ == "__main__":
    main()
