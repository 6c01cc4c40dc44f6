"""Issue 13, rounds G4 and H3: the two LLMAutoscaling entries' trial guards with their
candidate's rollouts committed to the block of decisions a trial decides.

Why: the two LLM entries' guarded episodes are a third of the demo's zoo stage (about 50 s
of its 142 s of work on 2026-12-06). Their trials play the network to the episode's end; with
``commit: 15`` (``rlsched.policies.trial``, the guards' ``every``) a candidate's rollout plays
the network for the 15 decisions the trial decides, then the anchor, which reads the
simulator, not the observation, so the rest of the rollout costs what the anchor's costs:
the trial weighs what it decides against the anchor throughout, a rollout step of policy
improvement over the anchor one block long. Round C9 (``make_zoo_wf_congested_commit_longer.py``)
shipped the same for WorkflowOffloading at 60 decisions. One look before this rule, two
conv-1x episodes of seed 5,000 (no set below) per entry: 9.8 s against 6.4 s (the attainment
entry), 5.2 s against 3.7 s (the cost-goal entry). Nothing is trained or tuned here.

    python docs/results/make_zoo_llm_commit.py [--workers 2] [--dry]   # about 30 minutes

The rule, fixed here (2026-12-06, forty-third session, before any episode of it was played):

Round G4, the attainment entry ``llm-autoscaling-slo-ppo`` (P: as shipped by round G2; C: the
same guard with ``commit: 15``):

1. Validation as round G2 chose P: the split's validation trace (conv) at ``conv-1x``,
   ``conv-2x`` and ``conv-3x``, 20 fresh episodes each (seeds 82,300-82,319): threshold, P
   and C, SLO attainment, paired 95%.
2. C replaces P if (a) it is not significantly worse than threshold at any of the three,
   (b) over the 60 the lower end of the paired 95% interval of C less P is above -0.005 (round
   G2's margin for a guard against the entry without it) and (c) its mean attainment over the
   60 is at most 0.001 below P's. Shipping C: ``meta.json`` ``trial`` gains ``commit: 15``, the
   card is measured again on its own episodes.
3. Test, whatever the choice: ``code-1x`` to ``code-3x`` (the split's test trace), 30 fresh
   episodes each (seeds 92,000-92,029): threshold, hpa, P and C; P and C each against
   threshold on attainment, C against P. Nothing is chosen on it.

Round H3, the cost-goal entry ``llm-autoscaling-hpa-threshold-residual-ppo`` (P: as shipped by
round H2; C: the same guard with ``commit: 15``):

1. Validation as round H2 chose P: bursty conv (``burst: 1.0``) at ``conv-1x`` to ``conv-3x``,
   20 fresh episodes each (seeds 82,320-82,339): hpa, P and C; at a preset a player meets the
   goal when its attainment is not significantly below HPA's and its cost not significantly
   above (paired 95%).
2. C replaces P if it meets the goal at as many of the three presets as P or more, and its
   mean attainment over the 60 is at most 0.001 below P's. Shipping as in G4.
3. Test, whatever the choice: ``code-1x`` to ``code-3x``, 30 fresh episodes each (seeds
   92,100-92,129): hpa, threshold, P and C, the goal's verdict per preset, C against P on
   both metrics. Nothing is chosen on it.

``--dry`` plays both rounds on 2 episodes per setting of seed 10 (validation and test
traces), figures discarded and nothing shipped, to check the script end to end.

Writes ``docs/results/llm_commit_g4.json`` and ``docs/results/llm_commit_h3.json``.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from make_zoo import ROOT, trial_spec
from make_zoo_llm_cost_trial import goal
from make_zoo_llm_trial import drop_guard_line, played, ship_guard, vs

from rlsched.splits import SPLITS
from rlsched.zoo import ZOO_DIR

ENV = "rlsched/LLMAutoscaling-v0"
VAL_PRESETS = ("conv-1x", "conv-2x", "conv-3x")
TEST_PRESETS = ("code-1x", "code-2x", "code-3x")
COMMIT = 15
#: C's mean attainment over the validation episodes may be this far below P's
TOLERANCE = 0.001


def _guards(name: str) -> tuple[str, str, dict, dict]:
    """Entry ``name``'s shipped guard P and the committed one C, as specs, and their
    settings."""
    meta = json.loads((ZOO_DIR / name / "model/meta.json").read_text())
    settings = meta["trial"]
    assert "commit" not in settings, f"{name}: the guard as its last round shipped it"
    committed = {**settings, "commit": COMMIT}
    return f"learned:zoo/{name}", trial_spec(f"learned:zoo/{name}", committed), settings, committed


def round_g4(workers: int, dry: bool) -> dict:
    """Round G4 (the module docstring)."""
    t0 = time.perf_counter()
    name = "llm-autoscaling-slo-ppo"
    shipped, committed, _, settings = _guards(name)
    names = {"threshold": "threshold", shipped: "P", committed: "C"}
    (vseed, tseed, nval, ntest) = (10, 10, 2, 2) if dry else (82_300, 92_000, 20, 30)
    val = played(SPLITS[ENV].validation, VAL_PRESETS, vseed, nval,
                 {p: tuple(names) for p in VAL_PRESETS}, workers)  # fmt: skip
    per = {p: {names[s]: {"slo_attainment": float(np.mean(val[p][s]["slo_attainment"])),
                          "cost": float(np.mean(val[p][s]["cost"]))} for s in names}
           for p in VAL_PRESETS}  # fmt: skip
    for p in VAL_PRESETS:
        for s in (shipped, committed):
            per[p][names[s]]["vs_threshold"] = vs(
                val[p][s]["slo_attainment"], val[p]["threshold"]["slo_attainment"],
                "threshold", "slo_attainment", "higher")  # fmt: skip
        print(f"validation {p}: {json.dumps(per[p])}", flush=True)
    att = {s: np.concatenate([val[p][s]["slo_attainment"] for p in VAL_PRESETS])
           for s in (shipped, committed)}  # fmt: skip
    c_vs_p = vs(att[committed], att[shipped], "P", "slo_attainment", "higher")
    checks = {
        "not_worse_than_threshold_anywhere": all(
            per[p]["C"]["vs_threshold"]["verdict"] != "worse" for p in VAL_PRESETS),
        "c_minus_p_lower_end_above_-0.005": c_vs_p["ci95"][0] > -0.005,
        "mean_within_0.001_of_p": float(att[committed].mean()) >= float(att[shipped].mean())
        - TOLERANCE,
    }  # fmt: skip
    ships = all(checks.values()) and not dry
    print(f"C against P {c_vs_p}; checks {checks}; C ships: {ships}", flush=True)
    out: dict = {"rule": "docs/results/make_zoo_llm_commit.py, round G4", "settings": settings,
                 "dry": dry,
                 "validation": {"dataset": SPLITS[ENV].validation, "seed": vseed,
                                "episodes_per_preset": nval, "per_preset": per,
                                "mean_attainment": {names[s]: float(v.mean())
                                                    for s, v in att.items()},
                                "c_vs_p": c_vs_p},
                 "checks": checks, "ships": ships}  # fmt: skip
    tnames = {"threshold": "threshold", "hpa": "hpa", shipped: "P", committed: "C"}
    test = played(SPLITS[ENV].test, TEST_PRESETS, tseed, ntest,
                  {p: tuple(tnames) for p in TEST_PRESETS}, workers)  # fmt: skip
    out["test"] = {"dataset": SPLITS[ENV].test, "seed": tseed, "episodes": ntest, "presets": {}}
    for p in TEST_PRESETS:
        t = test[p]
        row: dict = {tnames[s]: {k: float(np.mean(v)) for k, v in t[s].items()} for s in t}
        for s in (shipped, committed):
            row[tnames[s]]["vs_threshold"] = vs(t[s]["slo_attainment"],
                                                t["threshold"]["slo_attainment"], "threshold",
                                                "slo_attainment", "higher")  # fmt: skip
        row["c_vs_p"] = vs(t[committed]["slo_attainment"], t[shipped]["slo_attainment"], "P",
                           "slo_attainment", "higher")  # fmt: skip
        out["test"]["presets"][p] = row
        print(f"test {p}: {json.dumps(row)}", flush=True)
    out["seconds"] = time.perf_counter() - t0
    if ships:
        drop_guard_line(name)  # round G2's line gives way to G4's
        card = ship_guard(
            name, f"learned:{ZOO_DIR / name / 'model'}", settings,
            f"round G4 (docs/results/make_zoo_llm_commit.py): round G2's guard with its "
            f"network rollouts committed to the {COMMIT} decisions a trial decides; on "
            f"{nval} fresh episodes of each of {', '.join(VAL_PRESETS)} (seeds {vseed:,}+) not "
            f"significantly worse than threshold at any, against round G2's guard "
            f"{c_vs_p['mean_diff']:+.4f} (95% CI {c_vs_p['ci95'][0]:+.4f} to "
            f"{c_vs_p['ci95'][1]:+.4f}); round G2: " + json.loads(
                (ZOO_DIR / name / "card.json").read_text())["trial_chosen_by"],
            "It plays under a trial guard over threshold (meta.json \"trial\", chosen on "
            "validation by docs/results/make_zoo_llm_trial.py, its rollouts committed to 15 "
            "decisions by docs/results/make_zoo_llm_commit.py): the network acts only where its "
            "rollouts over sampled futures beat the anchor's; training does not read the guard.",
        )  # fmt: skip
        out["card_test"] = card["test"]["paired"]
        print(f"C ships: card test {card['test']['paired']}", flush=True)
    return out


def round_h3(workers: int, dry: bool) -> dict:
    """Round H3 (the module docstring)."""
    t0 = time.perf_counter()
    name = "llm-autoscaling-hpa-threshold-residual-ppo"
    shipped, committed, _, settings = _guards(name)
    names = {"hpa": "hpa", "threshold": "threshold", shipped: "P", committed: "C"}
    (vseed, tseed, nval, ntest) = (10, 10, 2, 2) if dry else (82_320, 92_100, 20, 30)
    vplayers = ("hpa", shipped, committed)
    val = played(SPLITS[ENV].validation, VAL_PRESETS, vseed, nval,
                 {p: vplayers for p in VAL_PRESETS}, workers, {"burst": 1.0})  # fmt: skip
    per: dict = {}
    for p in VAL_PRESETS:
        per[p] = {names[s]: {k: float(np.mean(v)) for k, v in val[p][s].items()}
                  for s in vplayers}  # fmt: skip
        for s in (shipped, committed):
            per[p][names[s]]["vs_hpa"] = goal(val[p], s)
        print(f"validation {p}: " + "; ".join(
            f"{names[s]} {per[p][names[s]]['slo_attainment']:.4f} ${per[p][names[s]]['cost']:.2f}"
            + ("" if s == "hpa" else " (met)" if per[p][names[s]]["vs_hpa"]["met"] else
               " (missed)") for s in vplayers), flush=True)  # fmt: skip
    met = {names[s]: sum(per[p][names[s]]["vs_hpa"]["met"] for p in VAL_PRESETS)
           for s in (shipped, committed)}  # fmt: skip
    att = {names[s]: float(np.mean([val[p][s]["slo_attainment"] for p in VAL_PRESETS]))
           for s in (shipped, committed)}  # fmt: skip
    checks = {"meets_the_goal_as_often_as_p": met["C"] >= met["P"],
              "mean_within_0.001_of_p": att["C"] >= att["P"] - TOLERANCE}  # fmt: skip
    ships = all(checks.values()) and not dry
    print(f"met {met}; mean attainment {att}; checks {checks}; C ships: {ships}", flush=True)
    out: dict = {"rule": "docs/results/make_zoo_llm_commit.py, round H3", "settings": settings,
                 "dry": dry,
                 "validation": {"dataset": SPLITS[ENV].validation, "env_kwargs": {"burst": 1.0},
                                "seed": vseed, "episodes_per_preset": nval, "per_preset": per,
                                "met": met, "mean_attainment": att},
                 "checks": checks, "ships": ships}  # fmt: skip
    tplayers = ("hpa", "threshold", shipped, committed)
    test = played(SPLITS[ENV].test, TEST_PRESETS, tseed, ntest,
                  {p: tplayers for p in TEST_PRESETS}, workers)  # fmt: skip
    out["test"] = {"dataset": SPLITS[ENV].test, "seed": tseed, "episodes": ntest, "presets": {}}
    for p in TEST_PRESETS:
        t = test[p]
        row: dict = {names[s]: {k: float(np.mean(v)) for k, v in t[s].items()} for s in t}
        for s in (shipped, committed):
            row[names[s]]["vs_hpa"] = goal(t, s)
        row["c_vs_p"] = {
            "slo_attainment": vs(t[committed]["slo_attainment"], t[shipped]["slo_attainment"],
                                 "P", "slo_attainment", "higher"),
            "cost": vs(t[committed]["cost"], t[shipped]["cost"], "P", "cost", "lower")}
        out["test"]["presets"][p] = row
        print(f"test {p}: P met {row['P']['vs_hpa']['met']}, C met {row['C']['vs_hpa']['met']}; "
              f"{json.dumps(row)}", flush=True)  # fmt: skip
    out["seconds"] = time.perf_counter() - t0
    if ships:
        drop_guard_line(name)
        card = ship_guard(
            name, f"learned:{ZOO_DIR / name / 'model'}", settings,
            f"round H3 (docs/results/make_zoo_llm_commit.py): round H2's guard with its "
            f"rollouts committed to the {COMMIT} decisions a trial decides; on {nval} fresh "
            f"bursty episodes (burst 1.0) of each of {', '.join(VAL_PRESETS)} (seeds {vseed:,}+)"
            f" it met the goal at {met['C']} of 3, round H2's guard at {met['P']}; mean "
            f"attainment {att['C']:.4f} against {att['P']:.4f}; round H2: " + json.loads(
                (ZOO_DIR / name / "card.json").read_text())["trial_chosen_by"],
            "It plays under a trial guard over hpa (meta.json \"trial\", chosen on validation by "
            "docs/results/make_zoo_llm_cost_trial.py, its rollouts committed to 15 decisions by "
            "docs/results/make_zoo_llm_commit.py): the model acts only where its rollouts over "
            "sampled futures (blocks of the recent arrivals) are cheaper than HPA's at no loss "
            "of SLO attainment; training does not read the guard.",
        )  # fmt: skip
        out["card_test"] = card["test"]["paired"]
        print(f"C ships: card test {card['test']['paired']}", flush=True)
    return out


def main(workers: int, dry: bool, rounds: list[str]) -> None:
    for r in rounds:
        out = round_g4(workers, dry) if r == "G4" else round_h3(workers, dry)
        path = ROOT / f"docs/results/llm_commit_{r.lower()}{'_dry' if dry else ''}.json"
        path.write_text(json.dumps(out, indent=1) + "\n")
        print(f"wrote {path} in {out['seconds']:.0f} s", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--dry", action="store_true", help="both rounds end to end, 2 episodes")
    ap.add_argument("--rounds", default="G4,H3")
    args = ap.parse_args()
    main(args.workers, args.dry, args.rounds.split(","))
