"""Issue 13: the WorkflowOffloading ``congested`` zoo entry ``workflow-congested-ppo``, chosen
again on workflow families that neither training nor test uses.

Why: the entry (a HEFT clone fine-tuned by PPO) is significantly better than HEFT on the split's
validation set (one synthetic family, epigenomics, which training also holds) and significantly
worse on 30 fresh test episodes (blast and helloworld runs, families it never saw;
``make_zoo_wf_congested.py`` has the figures). The test set measures how a policy does on
unseen families, so the choice here measures that too: three wfcommons families in neither the
training data nor the test set nor the recipes of ``configs/workflow_offloading_congested_mix.
yaml`` (cycles, seismology, soykb; blast's recipe is fitted to the test family's runs and is
used nowhere).

    bash docs/results/train_wf_congested_pool.sh   # the candidates (16 cores; run once)
    python docs/results/make_zoo_wf_congested_broad.py [--episodes N]
    python docs/results/zoo_oracle.py   # after a replacement: the card's oracle record

(a run with N other than the rule's 10 writes its figures and ships nothing).

The rule, fixed here before any candidate was judged (on 2026-11-27 only the entry and the
heuristics had played 4 of these episodes, to time them and to see the families' scales):
the finished runs (``run.json``) of ``workflow_offloading_congested`` seeds 3-9 and
``workflow_offloading_congested_mix`` seeds 0-7 are the candidates; they, the entry and HEFT
play N episodes (default 10, seeds 10,000+) of each family under the preset ``congested``. A
policy's value on an episode is its mean completion relative to HEFT's on the same episode,
in percent (the families' completions differ by three orders of magnitude: seconds in
seismology, hours in soykb, so raw seconds would let soykb alone decide). Eligible: not
significantly worse than HEFT over the 3N episodes (paired 95% bootstrap interval of that
relative gap). The eligible candidate with the lowest mean gap replaces the entry when the
entry is not eligible or that candidate is significantly better than the entry (paired gaps).
A replacement is judged afterwards on 30 fresh test episodes, seeds 4000-4029
(``confirm_test.py workflow-congested-ppo --seed 4000``), fixed before this ran.
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from make_zoo import VAL_SEED, Choice, _ship_choice, candidate_runs, label, record_choice

from rlsched.evaluate import compare
from rlsched.splits import SPLITS
from rlsched.stats import paired
from rlsched.zoo import ZOO_DIR

FAMILIES = (
    "wfcommons:cycles?tasks=80&seed=21&workflows=4",
    "wfcommons:seismology?tasks=110&seed=21&workflows=4",
    "wfcommons:soykb?tasks=100&seed=21&workflows=4",
)
CHOICE = Choice(
    name="workflow-congested-ppo",
    env="rlsched/WorkflowOffloading-v0",
    preset="congested",
    extra={},
    pool=("workflow_offloading_congested", "workflow_offloading_congested_mix"),
    metric="mean_completion",
    unit="% of HEFT's mean completion",
    results="wf_congested_broad_choice",
    script="docs/results/make_zoo_wf_congested_broad.py",
    episodes=10,
    heuristics="heft",
    direction="lower",
)


def _play(
    job: tuple[Choice, str, int, int, list[str]],
) -> tuple[str, int, dict[str, list[float]]]:
    """One family's episodes ``[seed, seed + n)``: every policy's mean completion per episode.
    ``c.extra``: env arguments the candidates need (observation keys only); every policy plays
    with them, and a model trained without them leaves them unread."""
    c, ds, seed, n, specs = job
    kwargs = {**SPLITS[c.env].env_kwargs, **c.extra, "scenario": c.preset}
    rep = compare(c.env, ds, specs, episodes=n, seed=seed, env_kwargs=kwargs)
    assert rep["main_metric"] == c.metric, rep["main_metric"]
    return ds, seed, {r["policy"]: list(r["episode_values"]) for r in rep["results"]}


def main(
    c: Choice = CHOICE,
    first_seed: int = VAL_SEED,
    failed_test: str | None = None,
    retired: tuple[str, ...] = (),
) -> None:
    """The rule above for the pool ``c.pool`` on episodes ``first_seed`` onwards of each family
    (``make_zoo_wf_congested_anchored.py`` runs it again for another pool). ``failed_test``:
    the record (``docs/results/confirm_*.json``) of the entry's last test fixed beforehand; when
    it found the entry significantly worse than its reference, the kept candidate replaces the
    entry whatever the entry's verdicts here (``make_zoo_wf_congested_retire.py``). ``retired``:
    candidate labels (``config/seedN``) whose models a failed test retired; they are not
    candidates again."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=c.episodes)
    ap.add_argument("--workers", type=int, default=2)
    n = ap.parse_args().episodes
    t0 = time.perf_counter()
    runs = [r for r in candidate_runs(c.pool) if label(r) not in retired]
    entry = f"learned:{ZOO_DIR / c.name / 'model'}"
    specs = {f"learned:{r / 'model'}": r for r in runs}
    policies = ["heft", entry, *specs]
    # the slow family (seismology: 864 decisions an episode) in halves, to balance the workers
    half = n // 2
    jobs = [(c, ds, first_seed, n, policies) for ds in FAMILIES if "seismology" not in ds]
    jobs += [(c, ds, first_seed + k, m, policies) for ds in FAMILIES if "seismology" in ds
             for k, m in ((0, half), (half, n - half)) if m]  # fmt: skip
    with ProcessPoolExecutor(ap.parse_args().workers) as pool:
        parts = sorted(pool.map(_play, jobs), key=lambda p: (FAMILIES.index(p[0]), p[1]))
    raw = {p: np.concatenate([v[p] for _, _, v in parts]) for p in policies}
    gap = {p: 100.0 * (raw[p] / raw["heft"] - 1.0) for p in policies}
    zero = np.zeros_like(gap["heft"])

    def vs_heft(p: str) -> dict:
        return paired(gap[p], zero, direction="lower", reference="heft",
                      metric="mean completion relative to HEFT (%)").to_json()

    verdicts = {p: vs_heft(p) for p in policies if p != "heft"}
    eligible = [s for s in specs if verdicts[s]["verdict"] != "worse"]
    kept = min(eligible, key=lambda s: float(gap[s].mean())) if eligible else None
    vs_entry = None if kept is None else paired(
        gap[kept], gap[entry], direction="lower", reference="the entry so far",
        metric="mean completion relative to HEFT (%)").to_json()
    entry_ok = verdicts[entry]["verdict"] != "worse"
    failed = None
    if failed_test is not None:
        rec = json.loads(Path(failed_test).read_text())
        assert rec["entry"] == c.name, rec["entry"]
        failed = {"record": failed_test, "seed": rec["seed"], "episodes": rec["episodes"],
                  "vs_reference": rec["learned_vs_best"]}  # fmt: skip
    retire = failed is not None and failed["vs_reference"]["verdict"] == "worse"
    replace = kept is not None and (retire or not entry_ok or vs_entry["verdict"] == "better")

    def name(p: str) -> str:
        return label(specs[p]) if p in specs else ("entry" if p == entry else p)

    per_family = {
        ds.split("?")[0]: {name(p): float(np.mean(np.concatenate(
            [v[p] for d, _, v in parts if d == ds]))) for p in policies}
        for ds in FAMILIES}  # fmt: skip
    out = record_choice(
        c, n,
        {"datasets": list(FAMILIES), "episodes_per_family": n, "seed": first_seed,
         "preset": c.preset, "reference": "heft", "mean_completion_per_family": per_family,
         "mean_gap_pct": {name(p): float(gap[p].mean()) for p in policies},
         "vs_heft": {name(p): v for p, v in verdicts.items()}},
        entry_ok, None if kept is None else label(specs[kept]), vs_entry, replace, t0,
        **({} if failed is None else {"entry_failed_test": failed, "retires_entry": retire}))
    for p in policies[1:]:
        v = verdicts[p]
        print(f"  {name(p):45s} {gap[p].mean():+7.2f}% [{v['ci95'][0]:+.2f}, "
              f"{v['ci95'][1]:+.2f}] {v['verdict']}")
    print(f"kept {out['kept']}; vs the entry {vs_entry}; entry retired by its failed test: "
          f"{retire}; replaces: {replace}; "
          f"{out['seconds']:.0f} s")
    if replace and n == c.episodes:  # a run with another N only reports
        assert kept is not None and vs_entry is not None
        _ship_choice(
            c, specs[kept], runs,
            kwargs={**SPLITS[c.env].env_kwargs, **c.extra, "scenario": c.preset},
            val_means={label(r): float(gap[s].mean()) for s, r in specs.items()},
            vs_entry=vs_entry, ref="heft", episodes=len(zero),
            selected_by=(
                f"lowest mean completion relative to HEFT over {n} episodes "
                f"(seeds {first_seed:,}+) of each of "
                f"{', '.join(d.split('?')[0] for d in FAMILIES)} (families used neither in "
                f"training nor in test), among the {len(runs)} candidate runs' kept models "
                f"not significantly worse than HEFT there; {c.script}"),
            replaced_because=None if not retire else (
                f"the entry so far failed its test fixed beforehand ({failed['episodes']} "
                f"episodes, seeds {failed['seed']}+: significantly worse than "
                f"{failed['vs_reference']['reference']}, "
                f"{failed['vs_reference']['mean_diff']:+.2f} {c.metric}); against it on the "
                f"same validation episodes: {vs_entry['verdict']} ({vs_entry['mean_diff']:+.2f} "
                f"{c.unit}, 95% CI {vs_entry['ci95'][0]:+.2f} to {vs_entry['ci95'][1]:+.2f})"),
        )


if __name__ == "__main__":
    main()
