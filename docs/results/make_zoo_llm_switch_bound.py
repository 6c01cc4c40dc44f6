"""Issue 13, LLM round O: the bound of ``hpa_threshold``'s switch, per pool, chosen on
validation instead of read off diagnosis episodes.

Why: ``hpa_threshold`` (HPA on a pool while its recent demand needs fewer than 2.5 of the
sizing rule's instances, threshold once it needs more) carries the LLM cost-goal entry, whose
learned correction changes a few hundredths of a percent of its decisions. On the three fixed
tests of rounds M and N it met the goal at 4 of 6 presets, missing conv-1x by 3-4 cents per
episode (it now and then hands a pool to threshold there) and one of code-2x / code-3x on
attainment. Its 2.5 came from 6 diagnosis episodes per setting (``llm_switch_diag.py``), one
number for both pools. A bound per pool may serve both ends: a higher one where 1x pays for
threshold, a lower one where 2x-3x needs it.

Fixed here (2026-11-28, twelfth session) and committed before any episode below played:

1. Candidates: ``HPAThresholdPolicy(switch_instances={"prompt": p, "token": t})`` for p and t
   in (1.5, 2.0, 2.5, 3.0, 4.0): 25 pairs, (2.5, 2.5) being today's default.
2. Validation, fresh episodes (seeds 63,000+; no seed of 63,000+ has played any episode of this
   env), 30 per setting, the twelve settings of every round since K (conv and training's
   request mixes at 1x, 2x, 3x, as they are and with ``{"burst": 0.5}``), each candidate and
   HPA on the same episodes; a setting counts when the candidate's mean attainment is at least
   HPA's and its mean cost at most HPA's, not both equal (``meets`` of the rounds).
3. Kept: the pair meeting the goal in the most settings; ties go to (2.5, 2.5) when it is
   among them, else to the higher mean attainment over the twelve settings, then the lower
   mean cost.
4. Only if the kept pair meets the goal in more settings than (2.5, 2.5) does it become
   ``hpa_threshold``'s default. The shipped entry then keeps its base as it was trained: its
   card names the base's arguments (``residual.policy_kwargs``, ``switch_instances`` 2.5), so
   its decisions do not change. (Added after the round: where round P changed the default, the
   arguments went into the base's policy spec, ``residual.policy`` =
   ``hpa_threshold?switch_window=1``, not into a separate ``policy_kwargs`` field.)
5. Test, fresh episodes (seeds 64,000-64,029), 30 per preset, code-1x to code-3x then conv-1x
   to conv-3x: the kept pair and (2.5, 2.5) (one player when they are the same), each paired
   with HPA and threshold on attainment and cost, the goal's verdict per preset as in every
   round. Nothing is chosen on test.

Runs on two processes (the 25 pairs and HPA per setting). Writes
``docs/results/llm_switch_bound_choice.json``.

    OMP_NUM_THREADS=1 python docs/results/make_zoo_llm_switch_bound.py
"""

import itertools
import json
import time
from functools import partial
from multiprocessing import Pool

import numpy as np
from make_zoo import ROOT
from make_zoo_llm_residual import finish, means, run, test_round
from make_zoo_llm_residual_bursty_trained import SETTINGS
from make_zoo_llm_residual_down import ENV, MIX, meets

from rlsched.envs.make import make_env
from rlsched.policies.llm import HPAThresholdPolicy
from rlsched.splits import SPLITS

SEEDS = (63_000, 64_000)
EPISODES = 30
BOUNDS = (1.5, 2.0, 2.5, 3.0, 4.0)
PAIRS = list(itertools.product(BOUNDS, BOUNDS))
TODAY = (2.5, 2.5)
OUT = ROOT / "docs/results/llm_switch_bound_choice.json"


def factory(**kwargs):
    """``hpa_threshold`` with the constructor arguments ``kwargs`` as a policy factory."""
    return partial(_make, kwargs)


def _make(kwargs: dict, env, seed: int | None) -> HPAThresholdPolicy:
    return HPAThresholdPolicy(env, seed, **kwargs)


def pair_args(pair: tuple[float, float]) -> dict:
    """The candidate ``pair`` (prompt bound, token bound) as constructor arguments."""
    # the window as it was then (the default is 16 since round P)
    return {"switch_instances": {"prompt": pair[0], "token": pair[1]}, "switch_window": 1}


def key(pair: tuple[float, float]) -> str:
    return f"prompt {pair[0]} token {pair[1]}"


SETTING_KEYS = [(json.dumps(extra), mix, load) for extra in SETTINGS for mix in ("conv", "mix")
                for load in ("1x", "2x", "3x")]  # fmt: skip


def one(task: tuple[int, str, dict | None, int]) -> tuple[int, str, dict[str, float]]:
    """Validation setting ``task[0]`` played by the candidate ``task[1]`` (constructor
    arguments ``task[2]``; None: HPA) on ``EPISODES`` episodes from seed ``task[3]``."""
    i, name, kwargs, seed = task
    extra, mix, load = SETTING_KEYS[i]
    kw = {**SPLITS[ENV].env_kwargs, "scenario": f"conv-{load}", **(MIX if mix == "mix" else {}),
          **json.loads(extra)}  # fmt: skip
    env = make_env(ENV, "azure-llm:conv", **kw)
    spec = "hpa" if kwargs is None else factory(**kwargs)
    return i, name, means(run(spec, env, seed, EPISODES))


def validate(candidates: dict[str, dict], seed: int) -> dict[str, dict]:
    """Every candidate (name -> constructor arguments) and HPA on the twelve validation
    settings, ``EPISODES`` episodes each from ``seed``, on two processes: means per setting."""
    t0 = time.perf_counter()
    tasks = [(i, n, a, seed) for i in range(len(SETTING_KEYS))
             for n, a in (("hpa", None), *candidates.items())]  # fmt: skip
    res: dict[str, dict] = {f"{e} {m}-{ld}": {} for e, m, ld in SETTING_KEYS}
    names = list(res)
    with Pool(2) as pool:
        for n, (i, who, m) in enumerate(pool.imap_unordered(one, tasks), 1):
            res[names[i]][who] = m
            if n % (len(candidates) + 1) == 0:
                print(f"{n}/{len(tasks)} ({time.perf_counter() - t0:.0f} s)", flush=True)
    return res


def tally(res: dict[str, dict], names: list[str]) -> tuple[dict, dict, dict]:
    """Per candidate: settings meeting the goal, mean attainment and mean cost over them."""
    settings = list(res)
    counts = {n: sum(meets(res[s][n], res[s]["hpa"]) for s in settings) for n in names}
    att = {n: float(np.mean([res[s][n]["slo_attainment"] for s in settings])) for n in names}
    cost = {n: float(np.mean([res[s][n]["cost"] for s in settings])) for n in names}
    return counts, att, cost


def choice_report(
    seeds: tuple[int, int],
    res: dict,
    tallied: tuple[dict, dict, dict],
    kept: str,
    changes: bool,
    t0: float,
) -> dict:
    """A round's report before its test: the validation means, the tally, the choice."""
    counts, att, cost = tallied
    return {
        "env": ENV, "validation_seed": seeds[0], "test_seed": seeds[1], "episodes": EPISODES,
        "validation": res, "settings_met": counts, "mean_attainment": att, "mean_cost": cost,
        "kept": kept, "default_changes": changes,
        "validation_seconds": time.perf_counter() - t0,
    }  # fmt: skip


def test_players(players: dict[str, dict], seed: int, report: dict, t0: float, out) -> None:
    """Rule 5: the players (name -> constructor arguments) on the fixed test, written with
    the report to ``out``."""
    report["test"], rows = test_round({n: factory(**a) for n, a in players.items()}, seed,
                                      EPISODES)  # fmt: skip
    columns = " | ".join(players)
    if len(players) == 1:  # finish's table has two player columns
        rows = [(*r, r[-1]) for r in rows]
        columns += " | (the same)"
    finish(report, rows, t0, out, columns)


def main() -> None:
    t0 = time.perf_counter()
    res = validate({key(p): pair_args(p) for p in PAIRS}, SEEDS[0])
    counts, att, cost = tally(res, [key(p) for p in PAIRS])
    top = max(counts.values())
    tied = [p for p in PAIRS if counts[key(p)] == top]
    kept = TODAY if TODAY in tied else max(tied, key=lambda p: (att[key(p)], -cost[key(p)]))
    changes = counts[key(kept)] > counts[key(TODAY)]
    report = choice_report(SEEDS, res, (counts, att, cost), key(kept), changes, t0)
    print("\n| prompt \\ token | " + " | ".join(map(str, BOUNDS)) + " |")
    print("|---" * (len(BOUNDS) + 1) + "|")
    for p in BOUNDS:
        print(f"| {p} | " + " | ".join(str(counts.get(key((p, t)), "")) for t in BOUNDS) + " |")
    print(f"\nkept: {key(kept)} ({counts[key(kept)]} of 12; today's {counts[key(TODAY)]}); "
          f"becomes the default: {changes}\n", flush=True)  # fmt: skip
    players = {key(kept): pair_args(kept)}
    if kept != TODAY:
        players[key(TODAY)] = pair_args(TODAY)
    test_players(players, SEEDS[1], report, t0, OUT)


if __name__ == "__main__":
    main()
