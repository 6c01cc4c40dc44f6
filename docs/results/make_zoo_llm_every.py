"""Issue 13, rounds G5 and H4: the two LLMAutoscaling entries' trial guards with fewer,
longer trials (``every`` 30 or 50 decisions instead of 15).

Why: the two LLM entries' guarded episodes are still about 40% of the demo's zoo stage (about
62 s of its 153 s of work at 2026-12-06 16:16 UTC, after that day's faster LLM rollouts),
and the stage is still above its minute. A trial plays to the episode's end, so its cost
falls with the episode; trials every 30 decisions cost about 55% of trials every 15, every 50
about 36% (the rollout steps of a 150-decision episode, 4 futures, 2 players). Round G1 had
every 30 as a candidate (better than threshold at each load on its validation; every 15 was
kept on its mean). Nothing is trained or tuned here; the network and the anchors are as
shipped. One look before this rule: none (no episode of these settings was played).

    python docs/results/make_zoo_llm_every.py [--workers 2] [--dry]   # about 30 minutes

The rule, fixed here (2026-12-06, forty-fourth session, before any episode of it was played):

Round G5, the attainment entry ``llm-autoscaling-slo-ppo`` (P: as shipped by round G4, every
15 decisions committed to 15; C30 and C50: the same guard every 30 / 50 decisions, committed
to 30 / 50):

1. Validation as round G4's: the split's validation trace (conv) at ``conv-1x``, ``conv-2x``
   and ``conv-3x``, 20 fresh episodes each (seeds 82,340-82,359): threshold, P, C30 and C50,
   SLO attainment, paired 95%.
2. A candidate qualifies if (a) it is not significantly worse than threshold at any of the
   three, (b) over the 60 the lower end of the paired 95% interval of it less P is above
   -0.005 and (c) its mean attainment over the 60 is at most 0.001 below P's (round G4's three
   conditions). The qualifying candidate with the longer ``every`` (the cheaper) replaces P;
   none qualifying, P stays. Shipping: ``meta.json`` ``trial`` gets the new ``every`` and
   ``commit``, the card is measured again on its own episodes.
3. Test, whatever the choice: ``code-1x`` to ``code-3x`` (the split's test trace), 30 fresh
   episodes each (seeds 92,200-92,229): threshold, hpa, P, C30 and C50; each guard against
   threshold on attainment, each candidate against P. Nothing is chosen on it.

Round H4, the cost-goal entry ``llm-autoscaling-hpa-threshold-residual-ppo`` (P: as shipped by
round H2, every 15 decisions; C30 and C50: the same guard every 30 / 50 decisions; no commit,
as round H3 left it):

1. Validation as round H3's: bursty conv (``burst: 1.0``) at ``conv-1x`` to ``conv-3x``, 20
   fresh episodes each (seeds 82,360-82,379): hpa, P, C30 and C50; at a preset a player meets
   the goal when its attainment is not significantly below HPA's and its cost not
   significantly above (paired 95%).
2. A candidate qualifies if it meets the goal at as many of the three presets as P or more
   and its mean attainment over the 60 is at most 0.001 below P's (round H3's conditions).
   The qualifying candidate with the longer ``every`` replaces P; none qualifying, P stays.
3. Test, whatever the choice: ``code-1x`` to ``code-3x``, 30 fresh episodes each (seeds
   92,300-92,329): hpa, threshold, P, C30 and C50, the goal's verdict per preset, each
   candidate against P on both metrics. Nothing is chosen on it.

``--dry`` plays both rounds on 2 episodes per setting of seed 10 (validation and test
traces), figures discarded and nothing shipped, to check the script end to end.

Writes ``docs/results/llm_every_g5.json`` and ``docs/results/llm_every_h4.json``.
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
EVERY = (30, 50)
#: a candidate's mean attainment over the validation episodes may be this far below P's
TOLERANCE = 0.001


def _guards(name: str, commit: bool) -> tuple[str, dict, dict[int, tuple[str, dict]]]:
    """Entry ``name``'s shipped guard P (spec and settings) and, per ``every`` of
    :data:`EVERY`, the candidate's spec and settings (``commit`` equal to it where P
    commits)."""
    meta = json.loads((ZOO_DIR / name / "model/meta.json").read_text())
    settings = meta["trial"]
    assert settings["every"] == 15, f"{name}: the guard as its last round shipped it"
    assert (settings.get("commit") == 15) == commit, f"{name}: commit as shipped"
    shipped = f"learned:zoo/{name}"
    cands = {}
    for k in EVERY:
        s = {**settings, "every": k, **({"commit": k} if commit else {})}
        cands[k] = (trial_spec(shipped, s), s)
    return shipped, settings, cands


def _pick(qualified: dict[int, bool]) -> int | None:
    """The longest qualifying ``every`` (the cheapest trials), None where none qualifies."""
    ok = [k for k in EVERY if qualified[k]]
    return max(ok) if ok else None


def round_g5(workers: int, dry: bool) -> dict:
    """Round G5 (the module docstring)."""
    t0 = time.perf_counter()
    name = "llm-autoscaling-slo-ppo"
    shipped, settings, cands = _guards(name, commit=True)
    names = {"threshold": "threshold", shipped: "P"} | {s: f"C{k}" for k, (s, _) in cands.items()}
    (vseed, tseed, nval, ntest) = (10, 10, 2, 2) if dry else (82_340, 92_200, 20, 30)
    val = played(SPLITS[ENV].validation, VAL_PRESETS, vseed, nval,
                 {p: tuple(names) for p in VAL_PRESETS}, workers)  # fmt: skip
    per = {p: {names[s]: {"slo_attainment": float(np.mean(val[p][s]["slo_attainment"])),
                          "cost": float(np.mean(val[p][s]["cost"]))} for s in names}
           for p in VAL_PRESETS}  # fmt: skip
    guards = [shipped, *(s for s, _ in cands.values())]
    for p in VAL_PRESETS:
        for s in guards:
            per[p][names[s]]["vs_threshold"] = vs(
                val[p][s]["slo_attainment"], val[p]["threshold"]["slo_attainment"],
                "threshold", "slo_attainment", "higher")  # fmt: skip
        print(f"validation {p}: {json.dumps(per[p])}", flush=True)
    att = {s: np.concatenate([val[p][s]["slo_attainment"] for p in VAL_PRESETS]) for s in guards}
    checks, vs_p = {}, {}
    for k, (s, _) in cands.items():
        vs_p[f"C{k}"] = c = vs(att[s], att[shipped], "P", "slo_attainment", "higher")
        checks[f"C{k}"] = {
            "not_worse_than_threshold_anywhere": all(
                per[p][f"C{k}"]["vs_threshold"]["verdict"] != "worse" for p in VAL_PRESETS),
            "minus_p_lower_end_above_-0.005": c["ci95"][0] > -0.005,
            "mean_within_0.001_of_p": float(att[s].mean()) >= float(att[shipped].mean())
            - TOLERANCE,
        }  # fmt: skip
    chosen = None if dry else _pick({k: all(checks[f"C{k}"].values()) for k in EVERY})
    print(f"against P {vs_p}; checks {checks}; ships: {chosen}", flush=True)
    out: dict = {"rule": "docs/results/make_zoo_llm_every.py, round G5", "settings": settings,
                 "dry": dry,
                 "validation": {"dataset": SPLITS[ENV].validation, "seed": vseed,
                                "episodes_per_preset": nval, "per_preset": per,
                                "mean_attainment": {names[s]: float(v.mean())
                                                    for s, v in att.items()},
                                "vs_p": vs_p},
                 "checks": checks, "ships": chosen}  # fmt: skip
    tnames = {"threshold": "threshold", "hpa": "hpa"} | {s: names[s] for s in guards}
    test = played(SPLITS[ENV].test, TEST_PRESETS, tseed, ntest,
                  {p: tuple(tnames) for p in TEST_PRESETS}, workers)  # fmt: skip
    out["test"] = {"dataset": SPLITS[ENV].test, "seed": tseed, "episodes": ntest, "presets": {}}
    for p in TEST_PRESETS:
        t = test[p]
        row: dict = {tnames[s]: {k: float(np.mean(v)) for k, v in t[s].items()} for s in t}
        for s in guards:
            row[tnames[s]]["vs_threshold"] = vs(t[s]["slo_attainment"],
                                                t["threshold"]["slo_attainment"], "threshold",
                                                "slo_attainment", "higher")  # fmt: skip
        for k, (s, _) in cands.items():
            row[f"C{k}_vs_p"] = vs(t[s]["slo_attainment"], t[shipped]["slo_attainment"], "P",
                                   "slo_attainment", "higher")  # fmt: skip
        out["test"]["presets"][p] = row
        print(f"test {p}: {json.dumps(row)}", flush=True)
    out["seconds"] = time.perf_counter() - t0
    if chosen is not None:
        new = cands[chosen][1]
        c = vs_p[f"C{chosen}"]
        drop_guard_line(name)  # round G4's line gives way to G5's
        card = ship_guard(
            name, f"learned:{ZOO_DIR / name / 'model'}", new,
            f"round G5 (docs/results/make_zoo_llm_every.py): round G4's guard with a trial "
            f"every {chosen} decisions committed to them (G4: every 15); on {nval} fresh "
            f"episodes of each of {', '.join(VAL_PRESETS)} (seeds {vseed:,}+) not significantly "
            f"worse than threshold at any, against round G4's guard {c['mean_diff']:+.5f} (95% "
            f"CI {c['ci95'][0]:+.5f} to {c['ci95'][1]:+.5f}); round G4: " + json.loads(
                (ZOO_DIR / name / "card.json").read_text())["trial_chosen_by"],
            "It plays under a trial guard over threshold (meta.json \"trial\", chosen on "
            "validation by docs/results/make_zoo_llm_trial.py, its rollouts committed to the "
            "decisions a trial decides by docs/results/make_zoo_llm_commit.py, a trial every "
            f"{chosen} decisions by docs/results/make_zoo_llm_every.py): the network acts only "
            "where its rollouts over sampled futures beat the anchor's; training does not read "
            "the guard.",
        )  # fmt: skip
        out["card_test"] = card["test"]["paired"]
        print(f"C{chosen} ships: card test {card['test']['paired']}", flush=True)
    return out


def round_h4(workers: int, dry: bool) -> dict:
    """Round H4 (the module docstring)."""
    t0 = time.perf_counter()
    name = "llm-autoscaling-hpa-threshold-residual-ppo"
    shipped, settings, cands = _guards(name, commit=False)
    names = {"hpa": "hpa", "threshold": "threshold", shipped: "P"} | {
        s: f"C{k}" for k, (s, _) in cands.items()}  # fmt: skip
    guards = [shipped, *(s for s, _ in cands.values())]
    (vseed, tseed, nval, ntest) = (10, 10, 2, 2) if dry else (82_360, 92_300, 20, 30)
    vplayers = ("hpa", *guards)
    val = played(SPLITS[ENV].validation, VAL_PRESETS, vseed, nval,
                 {p: vplayers for p in VAL_PRESETS}, workers, {"burst": 1.0})  # fmt: skip
    per: dict = {}
    for p in VAL_PRESETS:
        per[p] = {names[s]: {k: float(np.mean(v)) for k, v in val[p][s].items()}
                  for s in vplayers}  # fmt: skip
        for s in guards:
            per[p][names[s]]["vs_hpa"] = goal(val[p], s)
        print(f"validation {p}: " + "; ".join(
            f"{names[s]} {per[p][names[s]]['slo_attainment']:.4f} ${per[p][names[s]]['cost']:.2f}"
            + ("" if s == "hpa" else " (met)" if per[p][names[s]]["vs_hpa"]["met"] else
               " (missed)") for s in vplayers), flush=True)  # fmt: skip
    met = {names[s]: sum(per[p][names[s]]["vs_hpa"]["met"] for p in VAL_PRESETS) for s in guards}
    att = {names[s]: float(np.mean([val[p][s]["slo_attainment"] for p in VAL_PRESETS]))
           for s in guards}  # fmt: skip
    checks = {f"C{k}": {"meets_the_goal_as_often_as_p": met[f"C{k}"] >= met["P"],
                        "mean_within_0.001_of_p": att[f"C{k}"] >= att["P"] - TOLERANCE}
              for k in EVERY}  # fmt: skip
    chosen = None if dry else _pick({k: all(checks[f"C{k}"].values()) for k in EVERY})
    print(f"met {met}; mean attainment {att}; checks {checks}; ships: {chosen}", flush=True)
    out: dict = {"rule": "docs/results/make_zoo_llm_every.py, round H4", "settings": settings,
                 "dry": dry,
                 "validation": {"dataset": SPLITS[ENV].validation, "env_kwargs": {"burst": 1.0},
                                "seed": vseed, "episodes_per_preset": nval, "per_preset": per,
                                "met": met, "mean_attainment": att},
                 "checks": checks, "ships": chosen}  # fmt: skip
    tplayers = ("hpa", "threshold", *guards)
    test = played(SPLITS[ENV].test, TEST_PRESETS, tseed, ntest,
                  {p: tplayers for p in TEST_PRESETS}, workers)  # fmt: skip
    out["test"] = {"dataset": SPLITS[ENV].test, "seed": tseed, "episodes": ntest, "presets": {}}
    for p in TEST_PRESETS:
        t = test[p]
        row: dict = {names[s]: {k: float(np.mean(v)) for k, v in t[s].items()} for s in t}
        for s in guards:
            row[names[s]]["vs_hpa"] = goal(t, s)
        for k, (s, _) in cands.items():
            row[f"C{k}_vs_p"] = {
                "slo_attainment": vs(t[s]["slo_attainment"], t[shipped]["slo_attainment"],
                                     "P", "slo_attainment", "higher"),
                "cost": vs(t[s]["cost"], t[shipped]["cost"], "P", "cost", "lower")}
        out["test"]["presets"][p] = row
        print(f"test {p}: met " + ", ".join(
            f"{names[s]} {row[names[s]]['vs_hpa']['met']}" for s in guards)
            + f"; {json.dumps(row)}", flush=True)  # fmt: skip
    out["seconds"] = time.perf_counter() - t0
    if chosen is not None:
        new = cands[chosen][1]
        drop_guard_line(name)
        card = ship_guard(
            name, f"learned:{ZOO_DIR / name / 'model'}", new,
            f"round H4 (docs/results/make_zoo_llm_every.py): round H2's guard with a trial "
            f"every {chosen} decisions (H2: every 15); on {nval} fresh bursty episodes (burst "
            f"1.0) of each of {', '.join(VAL_PRESETS)} (seeds {vseed:,}+) it met the goal at "
            f"{met[f'C{chosen}']} of 3, round H2's guard at {met['P']}; mean attainment "
            f"{att[f'C{chosen}']:.4f} against {att['P']:.4f}; round H2: " + json.loads(
                (ZOO_DIR / name / "card.json").read_text())["trial_chosen_by"],
            "It plays under a trial guard over hpa (meta.json \"trial\", chosen on validation by "
            "docs/results/make_zoo_llm_cost_trial.py, a trial every "
            f"{chosen} decisions by docs/results/make_zoo_llm_every.py): the model acts only "
            "where its rollouts over sampled futures (blocks of the recent arrivals) are cheaper "
            "than HPA's at no loss of SLO attainment; training does not read the guard.",
        )  # fmt: skip
        out["card_test"] = card["test"]["paired"]
        print(f"C{chosen} ships: card test {card['test']['paired']}", flush=True)
    return out


def main(workers: int, dry: bool, rounds: list[str]) -> None:
    for r in rounds:
        out = round_g5(workers, dry) if r == "G5" else round_h4(workers, dry)
        path = ROOT / f"docs/results/llm_every_{r.lower()}{'_dry' if dry else ''}.json"
        path.write_text(json.dumps(out, indent=1) + "\n")
        print(f"wrote {path} in {out['seconds']:.0f} s", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--dry", action="store_true", help="both rounds end to end, 2 episodes")
    ap.add_argument("--rounds", default="G5,H4")
    args = ap.parse_args()
    main(args.workers, args.dry, args.rounds.split(","))
