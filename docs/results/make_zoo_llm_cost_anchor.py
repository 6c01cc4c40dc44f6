"""Issue 13, round H5: the LLMAutoscaling cost-goal entry's trial guard over a faster HPA.

Why: the cost-goal entry (``llm-autoscaling-hpa-threshold-residual-ppo``) plays under a trial
guard over HPA (rounds H1-H4) and, on the code trace, plays HPA's own play: it meets the cost
goal there by tying HPA, and it is significantly below the best heuristic on the fixed test
(-0.136 [-0.204, -0.077] against random at `code-1x`), the one unmet "no env worse" reading.
HPA's settings are Kubernetes' defaults: it evaluates every 15 s (``--horizontal-pod-
autoscaler-sync-period``) and its prompt pool aims at 40% busy. Scalers take their settings in
a spec since 2026-12-06 (``hpa?sync_period=5&prompt_target=0.5``), so the anchor can be an
operator's faster HPA. A guard anchored on a setting that beats default HPA on both metrics
would carry that into the entry, and the goal is read against default HPA.

What was looked at before this rule (2026-12-06, forty-seventh session): three exploratory
sweeps of HPA settings (``sync_period`` 15, 10, 5, 3; prompt target 0.25-0.7; token target
0.9, 0.8; ``scale_down_stabilization`` 300, 180, 120, 60 s) on conv at 1x-3x, as it is and
bursty, 10 episodes each of validation seeds 82,400-82,409 (means only, no verdicts; not used
below). They showed evaluating every 5 s raising attainment by about 0.04-0.05 at conv-2x and
3x at lower cost, and at a prompt target near 0.5 costing no more than HPA at most presets.
Nothing else was played; no code trace, no entry.

    python docs/results/make_zoo_llm_cost_anchor.py [--workers 2] [--dry]   # about 15 minutes

The rule, fixed here before any of its runs:

1. Anchor candidates: ``hpa`` with every combination of ``sync_period`` 15, 5 or 3 s,
   ``prompt_target`` 0.4, 0.5 or 0.55, ``token_target`` 0.9 or 0.8 and
   ``scale_down_stabilization`` 300 or 180 s (36 settings, the first HPA's defaults).
   Validation: the split's validation trace (conv) at ``conv-1x``, ``conv-2x`` and
   ``conv-3x``, as it is and bursty (``burst: 1.0``, as rounds H2-H4 validated on), 20 fresh
   episodes at each of the six (seeds 82,420-82,439). Eligible: at all six, paired 95%
   against default HPA, attainment not significantly below and cost not significantly above.
   Kept: the eligible setting with the highest mean attainment over the 120 episodes (a tie:
   the lower mean cost). If the defaults are kept, the round stops.
2. The entry: A, as shipped (round H4: guard over ``hpa``); V, the same guard (the same
   futures, every 50 decisions, ``metric: cost``, ``keep: slo_attainment``, blocks) over the
   kept setting. On fresh validation episodes, the six presets of step 1, 20 each (seeds
   82,440-82,459): HPA, A and V; at a preset a player meets the goal when its attainment is
   not significantly below HPA's and its cost not significantly above (paired 95%). V ships
   (``meta.json`` and card ``trial.anchor``, the card measured again) if it meets the goal at
   as many presets as A or more **and** its mean attainment over the 120 is higher than A's.
   Otherwise nothing ships.
3. Test, whatever step 2 decided (a record; nothing is chosen on it):
   a. The goal's six presets, ``code-1x`` to ``code-3x`` (the split's test trace) and
      ``conv-1x`` to ``conv-3x``, 30 fresh episodes each (seeds 92,400-92,429): every
      heuristic, the kept setting, A and V; each paired with HPA on attainment and cost and
      the goal's verdict per preset; V against A on both.
   b. The fixed test the "no env worse" goal is read off (seeds 2000-2029 at ``code-1x``):
      every heuristic, the kept setting, A and V; each against the best heuristic measured
      there (the highest mean attainment among the heuristics), paired 95%.

``--dry`` plays every step on 2 episodes of seed 10 per setting (validation and test traces),
figures discarded and nothing shipped, to check the script end to end.

Writes ``docs/results/llm_cost_anchor_h5.json``.

Before the run a dry run (``--dry``) checked the script end to end; its figures were
discarded. **Round H5 ran as fixed (2026-12-06, 23:44-23:48 UTC, 249 s): the round stopped at
step 1.** One of the 36 settings was eligible, HPA's defaults. Sixteen met the goal against
default HPA at five of the six presets, and each of them missed at ``conv-1x``, where HPA
reaches 0.989: the faster settings there either lose a little attainment (``sync_period=5&
prompt_target=0.5``: -0.0021 [-0.0058, -0.0004]) or cost a little more (``sync_period=3&
prompt_target=0.55``: +$0.74 [+0.08, +1.37] per episode). Nothing was shipped, and steps 2
and 3 did not run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time

import numpy as np
from llm_threshold_frontier import grid_specs
from make_zoo import ROOT
from make_zoo_llm_cost_trial import goal as hpa_goal
from make_zoo_llm_trial import drop_guard_line, played, ship_guard, vs

from rlsched.policies.llm import BASELINES
from rlsched.splits import SPLITS
from rlsched.zoo import ZOO_DIR

ENV = "rlsched/LLMAutoscaling-v0"
NAME = "llm-autoscaling-hpa-threshold-residual-ppo"
MODEL = ZOO_DIR / NAME / "model"
ENTRY = f"learned:{MODEL}"
GRID = {
    "sync_period": (15, 5, 3),
    "prompt_target": (0.4, 0.5, 0.55),
    "token_target": (0.9, 0.8),
    "scale_down_stabilization": (300, 180),
}
PRESETS = ("conv-1x", "conv-2x", "conv-3x")
CODE = ("code-1x", "code-2x", "code-3x")
BURSTY = {"burst": 1.0}
ANCHOR_SEED, ENTRY_SEED, VAL_EPISODES = 82_420, 82_440, 20
TEST_SEED, TEST_EPISODES = 92_400, 30
FIXED_SEED, FIXED_EPISODES, FIXED_PRESET = 2000, 30, "code-1x"
OUT = ROOT / "docs/results/llm_cost_anchor_h5.json"
#: V's model: the shipped files with the guard's anchor changed (``learned:PATH`` plays it)
CANDIDATE = ROOT / "runs/llm_cost_anchor_h5/model"


def candidates() -> list[str]:
    """The 36 settings as specs, HPA's defaults first (its spec: plain ``hpa``)."""
    out = grid_specs("hpa", GRID)
    assert len(out) == 36 and out[0] == "hpa"
    return out


def six(data: str, seed: int, n: int, players: tuple[str, ...], workers: int) -> dict:
    """``players`` at conv 1x-3x, as it is and bursty (``PRESET+burst``)."""
    res = played(data, PRESETS, seed, n, {p: players for p in PRESETS}, workers)
    bursty = played(data, PRESETS, seed, n, {p: players for p in PRESETS}, workers, BURSTY)
    return res | {f"{p}+burst": v for p, v in bursty.items()}


def goal(p: dict, who: str) -> dict:
    """``who`` at one preset: its means, its paired verdicts against HPA on attainment and cost
    and whether it meets the goal (round H1's :func:`make_zoo_llm_cost_trial.goal`)."""
    g = hpa_goal(p, who)
    return {"slo_attainment": float(np.mean(p[who]["slo_attainment"])),
            "cost": float(np.mean(p[who]["cost"])),
            "vs_hpa": {"slo_attainment": g["slo_attainment"], "cost": g["cost"]},
            "met": g["met"]}  # fmt: skip


def pooled(res: dict, who: str, metric: str) -> float:
    """``who``'s mean ``metric`` over every episode of every preset of ``res``."""
    return float(np.mean(np.concatenate([res[p][who][metric] for p in res])))


def candidate_model(anchor: str) -> str:
    """A copy of the entry's model whose guard is anchored on ``anchor``: ``learned:PATH``."""
    if CANDIDATE.exists():
        shutil.rmtree(CANDIDATE)
    shutil.copytree(MODEL, CANDIDATE)
    meta = json.loads((CANDIDATE / "meta.json").read_text())
    meta["trial"] = {**meta["trial"], "anchor": anchor}
    (CANDIDATE / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    return f"learned:{CANDIDATE}"


def main(workers: int, dry: bool) -> None:
    t0 = time.perf_counter()
    shipped = json.loads((MODEL / "meta.json").read_text())["trial"]
    assert shipped["anchor"] == "hpa" and shipped["every"] == 50, "not round H4's guard"
    n_val, n_test, n_fixed = (2, 2, 2) if dry else (VAL_EPISODES, TEST_EPISODES, FIXED_EPISODES)
    seeds = (10, 10, 10, 10) if dry else (ANCHOR_SEED, ENTRY_SEED, TEST_SEED, FIXED_SEED)
    split = SPLITS[ENV]
    out: dict = {"rule": "docs/results/make_zoo_llm_cost_anchor.py", "grid": GRID, "dry": dry}

    # 1. the anchor
    specs = candidates()
    val = six(split.validation, seeds[0], n_val, tuple(specs), workers)
    rows = {s: {p: goal(val[p], s) for p in val} for s in specs}
    eligible = [s for s in specs if all(rows[s][p]["met"] for p in val)]
    mean_att = {s: pooled(val, s, "slo_attainment") for s in specs}
    mean_cost = {s: pooled(val, s, "cost") for s in specs}
    kept = max(eligible, key=lambda s: (mean_att[s], -mean_cost[s]))
    if dry and kept == "hpa":
        kept = specs[-1]  # the dry run checks every step: figures discarded
    print(f"step 1: {len(eligible)} of {len(specs)} eligible; kept {kept} "
          f"(attainment {mean_att[kept]:.4f}, cost {mean_cost[kept]:.2f}; HPA "
          f"{mean_att['hpa']:.4f}, {mean_cost['hpa']:.2f}) [{time.perf_counter() - t0:.0f}s]",
          flush=True)  # fmt: skip
    out["anchor"] = {"seed": seeds[0], "episodes": n_val, "eligible": eligible, "kept": kept,
                     "mean_slo_attainment": mean_att, "mean_cost": mean_cost,
                     "per_preset": rows}  # fmt: skip
    if kept == "hpa":
        out["seconds"] = time.perf_counter() - t0
        if not dry:
            OUT.write_text(json.dumps(out, indent=1) + "\n")
        print("HPA's defaults kept: the round stops", flush=True)
        return

    # 2. the entry with its guard over the kept setting
    v_spec = candidate_model(kept)
    names = {"hpa": "hpa", ENTRY: "A", v_spec: "V"}
    ent = six(split.validation, seeds[1], n_val, tuple(names), workers)
    step2 = {names[s]: {p: goal(ent[p], s) for p in ent} for s in (ENTRY, v_spec)}
    met = {k: sum(r["met"] for r in v.values()) for k, v in step2.items()}
    att = {names[s]: pooled(ent, s, "slo_attainment") for s in (ENTRY, v_spec)}
    ships = met["V"] >= met["A"] and att["V"] > att["A"]
    print(f"step 2: met at {met['V']} (V) and {met['A']} (A) of 6; mean attainment "
          f"{att['V']:.4f} and {att['A']:.4f}: {'V ships' if ships else 'nothing ships'} "
          f"[{time.perf_counter() - t0:.0f}s]", flush=True)  # fmt: skip
    out["entry"] = {"seed": seeds[1], "episodes": n_val, "per_preset": step2, "met": met,
                    "mean_slo_attainment": att,
                    "mean_cost": {names[s]: pooled(ent, s, "cost") for s in (ENTRY, v_spec)},
                    "ships": ships}  # fmt: skip

    # 3a. the goal's six presets
    players = tuple(dict.fromkeys([*BASELINES, kept, ENTRY, v_spec]))
    label = {s: names.get(s, s) for s in players}
    test = played(split.test, CODE, seeds[2], n_test, {p: players for p in CODE}, workers)
    test |= played("azure-llm:conv", PRESETS, seeds[2], n_test, {p: players for p in PRESETS},
                   workers)  # fmt: skip
    out["test"] = {"seed": seeds[2], "episodes": n_test, "per_preset": {p: {
        **{label[s]: goal(test[p], s) for s in players if s != "hpa"},
        "hpa": {m: float(np.mean(test[p]["hpa"][m])) for m in ("slo_attainment", "cost")},
        "V_vs_A": {m: vs(test[p][v_spec][m], test[p][ENTRY][m], "A", m,
                         "higher" if m == "slo_attainment" else "lower")
                   for m in ("slo_attainment", "cost")}} for p in test}}  # fmt: skip
    for who in ("A", "V", kept):
        n_met = sum(out["test"]["per_preset"][p][who]["met"] for p in test)
        print(f"step 3a: {who} meets the goal at {n_met} of 6", flush=True)

    # 3b. the fixed test of the "no env worse" reading
    fixed = played(split.test, (FIXED_PRESET,), seeds[3], n_fixed,
                   {FIXED_PRESET: players}, workers)[FIXED_PRESET]  # fmt: skip
    best = max(BASELINES, key=lambda h: float(np.mean(fixed[h]["slo_attainment"])))
    recorded = json.loads((ROOT / "docs/results/confirm_llm-autoscaling-hpa-threshold-"
                                  "residual-ppo.json").read_text())["metrics"]  # fmt: skip
    same = {h: bool(np.isclose(np.mean(fixed[h]["slo_attainment"]),
                               recorded[h]["slo_attainment"], rtol=0, atol=1e-12))
            for h in BASELINES}  # the heuristics' episodes as recorded (not in a dry run)
    print(f"step 3b: the heuristics' means as recorded on 2026-12-06: {same}", flush=True)
    out["fixed"] = {"seed": seeds[3], "episodes": n_fixed, "preset": FIXED_PRESET,
                    "best_heuristic": best, "heuristics_as_recorded": same, "players": {label[s]: {
                        "slo_attainment": float(np.mean(fixed[s]["slo_attainment"])),
                        "cost": float(np.mean(fixed[s]["cost"])),
                        "vs_best": vs(fixed[s]["slo_attainment"], fixed[best]["slo_attainment"],
                                      best, "slo_attainment", "higher")}
                        for s in players}}  # fmt: skip
    for who in ("A", "V", kept):
        p = out["fixed"]["players"][who]
        v = p["vs_best"]
        print(f"step 3b: {who} {p['slo_attainment']:.3f} at ${p['cost']:.2f} against {best}: "
              f"{v['verdict']} {v['mean_diff']:+.3f} [{v['ci95'][0]:+.3f}, {v['ci95'][1]:+.3f}]",
              flush=True)  # fmt: skip
    out["seconds"] = time.perf_counter() - t0
    if dry:
        print(f"dry run: nothing written or shipped [{out['seconds']:.0f}s]", flush=True)
        return
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    if ships:
        ship(kept, met)
    print(f"done in {out['seconds']:.0f}s", flush=True)


def ship(kept: str, met: dict) -> None:
    """V's anchor in the entry's ``meta.json`` and card, the card measured again and the
    retraining config's guard line replaced."""
    settings = {**json.loads((MODEL / "meta.json").read_text())["trial"], "anchor": kept}
    drop_guard_line(NAME)
    card = ship_guard(
        NAME, ENTRY, settings,
        f"round H5 (docs/results/make_zoo_llm_cost_anchor.py): round H4's guard anchored on "
        f"{kept}, the HPA setting with the highest mean attainment of 36 that met the goal at "
        f"all six of conv 1x-3x, as it is and bursty (20 episodes each, seeds "
        f"{ANCHOR_SEED:,}+); on 20 fresh episodes of each of the six (seeds {ENTRY_SEED:,}+) "
        f"it met the goal at {met['V']}, round H4's guard at {met['A']}, with the higher mean "
        "attainment",
        f"It plays under a trial guard over {kept} (meta.json \"trial\", chosen on validation "
        "by docs/results/make_zoo_llm_cost_anchor.py): the model acts only where its rollouts "
        "over sampled futures are cheaper than the anchor's at no loss of SLO attainment; "
        "training does not read the guard.",
    )  # fmt: skip
    print(f"the entry ships the anchor: test {card['test']['paired']}", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--dry", action="store_true", help="2 episodes per setting, nothing kept")
    args = ap.parse_args()
    main(args.workers, args.dry)
