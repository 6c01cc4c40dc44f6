"""Decision latency of the shipped (zoo) policies, one core: the learned-wins issue's goal is
under 0.2 ms per decision at 100 nodes on the numpy path.

For every zoo entry: ``LearnedPolicy.act`` (what ``compare``, ``evaluate``, rollouts and the
demo call; node-scoring models act through :class:`rlsched.agents.node_numpy.NodeScorer`,
without torch) on observations of its env, at the node counts given where the env takes a
``num_nodes`` (and at its training size), beside SB3's ``predict`` on the same
observations; for a departure entry ``DeparturePolicy.act``, and the same with its
network scoring every decision whatever its threshold or familiarity guard, the guard's
check (per decision, and a workflow's first, which computes its profile), and, for one that
reads PEFT's schedule (``dag_plan``), the env's cost of computing it per decision (a fresh
copy of the env's state and PEFT's rollout from it, and what the keys cost the env's own
observation over the entry's play, where the schedule is kept while decisions follow it); for a
trial-guarded entry (:mod:`rlsched.policies.trial`) the network's act, the anchor's, and
the trials where the guard runs them (``TRIALS`` of them).
Two timings of each act. ``act``: called back to back on stored observations of the best
heuristic's play on the entry's test data (fewer than ``--decisions`` where they would hold
more than ``ROW_BUDGET`` action rows in all); a policy that reads the env's simulator rather
than the observation (the LLM heuristics, under a residual network) reads the env's last state
at each call. ``act_in_play``: timed at each decision of the policy's own play, the env
stepping between calls, as a served scheduler's state changes between requests: each call
meets its own state, with the caches the env's step left (at PodRebalancing's 100 nodes the
step writes 30 MB of move features). The goal is judged on ``act_in_play``, the slower of the
two. For a trial-guarded entry, ``between_trials_in_play``: the guard's own act between its
trials (trials switched off), following the network and following the anchor, each with the
stateful policies it plays beside them. Median and 99th percentile, after 20 warm-up calls.

    python benchmarks/bench_decide.py [--sizes 10,20,100] [--decisions 2000] [--json F]
    python benchmarks/bench_decide.py --entries ENTRY --join MODEL,MODEL[,...] [--json F]

``--join`` times a departure model joining the named models' networks (an ensemble, as
``departure_members`` writes it) on ``ENTRY``'s env and test data: an ensemble's cost before
one is shipped.
"""

from __future__ import annotations

import argparse
import inspect
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

import rlsched  # noqa: F401
from common import decision_times, machine, pin_one_core, write_json
from rlsched.envs.args import env_class
from rlsched.errors import PolicyError
from rlsched.evaluate import make_env
from rlsched.policies.departures import DeparturePolicy
from rlsched.policies.familiarity import profile
from rlsched.policies.learned import MASKED_ALGOS, LearnedPolicy
from rlsched.policies.registry import make_policy
from rlsched.policies.residual import ResidualPolicy
from rlsched.policies.trial import TrialGuard
from rlsched.splits import SPLITS, TEST_SEED
from rlsched.zoo import card, names


def _play(env: Any, n: int, visit: Any, pol: Any = None) -> None:
    """``pol``'s play (default: the env's base heuristic), episode after episode from the test
    seeds, calling ``visit(obs, mask)`` at each of ``n`` decisions before it is taken."""
    u = env.unwrapped
    if pol is None:
        pol = make_policy(u.oracle_base, env, seed=0)
    seed, k = TEST_SEED, 0
    while k < n:
        obs, _ = env.reset(seed=seed)
        done = False
        while not done and k < n:
            mask = u.action_masks()
            visit(obs, mask)
            k += 1
            obs, _, term, trunc, _ = env.step(pol.act(obs, mask))
            done = term or trunc
        seed += 1


def _states(env: Any, n: int) -> list[tuple[Any, np.ndarray]]:
    """Up to ``n`` (observation, mask) pairs of the env's base heuristic's play."""
    out: list[tuple[Any, np.ndarray]] = []
    _play(env, n, lambda obs, mask: out.append((obs, mask)))
    return out


def _in_play(env: Any, pol: Any, n: int) -> dict[str, float]:
    """``pol.act`` timed at each of ``n`` decisions of its own play (after 20 more), the env
    stepping between them as a served scheduler's state changes between requests: each call
    meets its own state (a policy that reads the simulator, such as an LLM heuristic under a
    residual network, reads the state of its decision) and caches the env's step left cold."""
    seeds = list(range(TEST_SEED, TEST_SEED + n + 20))  # at least one decision an episode
    return _summary(decision_times(env, pol, seeds, limit=n + 20)[20:])


def _between_trials_in_play(guard: TrialGuard, env: Any, n: int) -> dict[str, Any]:
    """A trial-guarded entry's decision between its trials, in play: ``TrialGuard.act`` with
    its trials switched off, following the network and following the anchor. Either way the
    guard also plays every other policy that keeps state (a stateful anchor beside the network,
    a stateful network beside the anchor), so each follows the real episode."""
    out: dict[str, Any] = {}
    guard.trial = lambda obs, mask: False  # type: ignore[method-assign]
    try:

        class Fixed:
            def __init__(self, choice: int | None) -> None:
                self.choice = choice

            def reset(self, seed: int | None = None) -> None:
                guard.reset(seed)

            def act(self, obs: Any, mask: np.ndarray) -> Any:
                guard.last_choice = self.choice
                return guard.act(obs, mask)

        for key, choice in (("network", 0), ("anchor", None)):
            out[key] = _in_play(env, Fixed(choice), n)
    finally:
        del guard.trial
    return {"between_trials_in_play": out}


def _plan_times(env: Any, n: int) -> dict[str, float]:
    """What ``dag_plan=True`` adds to each observation, timed at ``n`` decisions of the base's
    play: PEFT's schedule of the rest of the workflow by one compiled rollout (the copy of the
    env's state and the rollout)."""
    u = env.unwrapped
    ts: list[float] = []

    def plan(obs: Any, mask: np.ndarray) -> None:
        t0 = time.perf_counter()
        u.fast_rollouts("peft", "makespan", None, True).plan()
        ts.append(time.perf_counter() - t0)

    _play(env, n + 20, plan)
    return _summary(ts[20:])  # the first calls load the compiled kernels


def _observed_plan_times(env: Any, pol: DeparturePolicy, n: int) -> dict[str, Any]:
    """What the ``dag_plan`` keys cost the env's own observation (``_plan_observation``:
    the state's copy into arrays is the observation's at every decision, ``dag_plan`` or
    not), timed at ``n`` decisions of ``pol``'s own play, the network at every decision
    (no trial guard, whose anchor would follow PEFT more often): PEFT's schedule is played
    where a decision departed from it and kept where the decisions followed it (``_plan``);
    the share kept is counted."""
    u = env.unwrapped
    ts: list[float] = []
    kept = 0
    own = u._plan_observation

    def timed(*args: Any) -> None:
        nonlocal kept
        before = u._kept_plan
        t0 = time.perf_counter()
        own(*args)
        ts.append(time.perf_counter() - t0)
        kept += u._kept_plan is before and before is not None

    u._plan_observation = timed
    try:
        _play(env, n + 20, lambda obs, mask: None, pol)
    finally:
        del u._plan_observation
    return {**_summary(ts[20:]), "kept_share": round(kept / len(ts), 3)}


def _summary(ts: list[float]) -> dict[str, float]:
    """Median and 99th percentile of ``ts`` (seconds), in ms."""
    ts = sorted(ts)
    return {
        "median_ms": statistics.median(ts) * 1e3,
        "p99_ms": ts[min(len(ts) - 1, int(0.99 * len(ts)))] * 1e3,
    }


def _time(f: Any, states: list[tuple[Any, np.ndarray]]) -> dict[str, float]:
    for obs, mask in states[:20]:
        f(obs, mask)
    ts = []
    for obs, mask in states:
        t0 = time.perf_counter()
        f(obs, mask)
        ts.append(time.perf_counter() - t0)
    return _summary(ts)


def _guard_times(pol: DeparturePolicy, states: list[tuple[Any, np.ndarray]]) -> dict[str, Any]:
    """A guarded model's familiarity check (:mod:`rlsched.policies.familiarity`): per decision
    (each workflow's answer remembered, as the policy does), and a workflow's first, which
    computes its profile and its distances; a decision of a familiar workflow costs the check
    plus ``act_scoring_every_decision``."""
    if pol.guard is None:
        return {}
    guard = pol.guard

    def first(obs: Any, mask: np.ndarray) -> None:
        guard.allows(profile(obs))

    return {"guard_check": _time(lambda o, m: guard.familiar(o), states),
            "guard_first_of_a_workflow": _time(first, states)}  # fmt: skip


#: Observations kept for timing hold at most about this many action rows in all (PodRebalancing
#: at 100 nodes has 300,001 move rows of 20 features per observation: 2,000 would need 48 GB).
ROW_BUDGET = 4_000_000
#: Trials timed for a trial-guarded entry (each plays the network and its anchor over sampled
#: futures: about a second at PodRebalancing's 4 nodes, far more at 100)
TRIALS = 20


def _trial_times(guard: TrialGuard, env: Any, trials: int) -> dict[str, Any]:
    """A trial-guarded entry's trials (:mod:`rlsched.policies.trial`), timed where the shipped
    guard runs them (every ``guard.every`` decisions of the base heuristic's play), with the
    share of them the network won; between trials a decision costs the network's or the
    anchor's act (both timed)."""
    ts: list[float] = []
    won = 0
    k = 0

    def visit(obs: Any, mask: np.ndarray) -> None:
        nonlocal k, won
        if k % guard.every == 0 and len(ts) < trials:
            t0 = time.perf_counter()
            won += int(guard.trial(obs, mask))
            ts.append(time.perf_counter() - t0)
        k += 1

    _play(env, trials * guard.every, visit)
    return {"trial": {**_summary(ts), "trials": len(ts), "network_won": won,
                      "candidates": len(guard.candidates),
                      "every": guard.every, "futures": guard.futures,
                      "horizon": guard.horizon or "end"}}  # fmt: skip


def one(
    name: str, c: dict[str, Any], num_nodes: int | None, n: int, blas: int | None = None,
    model: str | None = None,
) -> dict[str, Any]:
    """One entry (or ``model``, a model folder, on that entry's env and data) timed."""
    env_id = c["env"]
    kwargs = dict(c.get("env_kwargs") or {})
    if c.get("preset"):
        kwargs.setdefault("scenario", c["preset"])
    if num_nodes is not None:
        kwargs["num_nodes"] = num_nodes
    # the entry's own test data (a whole-workflow model reads workflows of its size only)
    env = make_env(env_id, c.get("test", {}).get("dataset") or SPLITS[env_id].test, **kwargs)
    outer = make_policy(f"learned:{model or 'zoo/' + name}", env, seed=0)
    trial: dict[str, Any] = {}
    if isinstance(outer, TrialGuard):  # between trials it acts as the network or its anchor
        trial = _trial_times(outer, env, TRIALS)
        trial["anchor_act"] = _time(outer.base.act, _states(env, min(n, 200)))
        trial["anchor_act_in_play"] = _in_play(env, outer.base, n)
        trial.update(_between_trials_in_play(outer, env, n))
        outer = outer.policy
    if isinstance(outer, DeparturePolicy):  # its base heuristic and the network, in numpy
        states = _states(env, n)
        nodes = getattr(env.unwrapped, "num_nodes", None)
        # a model that reads PEFT's schedule needs the env to compute it for each decision
        plan = ({"env_plan": _plan_times(env, n),
                 "env_plan_in_observation": _observed_plan_times(env, outer, n)}
                if outer.plan else {})  # fmt: skip
        networks = len(outer.scorers)
        return {**plan, "entry": name, "env": env_id, "num_nodes": nodes,
                "actions": len(states[0][1]), "decisions": len(states),
                "valid_actions": int(np.median([m.sum() for _, m in states])),
                "path": ("compiled (DagScorer, numba)" if outer.scorer.compiled
                         else "numpy (DagScorer)") + f" over {outer.base_name}"
                + (f", {networks} networks" if networks > 1 else ""),
                "threshold": outer.threshold, "act": _time(outer.act, states),
                "act_in_play": _in_play(env, outer, n),
                # the network's cost at every decision, whatever the shipped threshold or guard
                "act_scoring_every_decision": _time(
                    DeparturePolicy(outer.dir, threshold=-np.inf, familiar="off").act, states),
                **_guard_times(outer, states), **trial}  # fmt: skip
    # a residual entry acts as its heuristic plus the network: both are timed (outer.act)
    pol = outer.learned if isinstance(outer, ResidualPolicy) else outer
    assert isinstance(pol, LearnedPolicy)
    if blas is not None:  # after LearnedPolicy's own setting (one thread), to compare with it
        threadpool_limits(limits=blas, user_api="blas")
    actions = int(getattr(env.action_space, "n", 1))
    states = _states(env, min(n, max(50, ROW_BUDGET // actions)))
    row: dict[str, Any] = {
        "entry": name, "env": env_id, "num_nodes": getattr(env.unwrapped, "num_nodes", None),
        "actions": len(states[0][1]), "decisions": len(states),
        "valid_actions": int(np.median([m.sum() for _, m in states])),
        "path": ("numpy (NodeScorer)" if pol._scorer is not None
                 else "numpy (MlpActor)" if pol._mlp is not None else "torch (SB3 predict)")
        + (f" over {outer.base.name}" if outer is not pol else ""),
        "act": _time(outer.act, states),
        "act_in_play": _in_play(env, outer, n),
        **trial,
    }  # fmt: skip
    if (pol._scorer is not None or pol._mlp is not None) and not pol.resized:
        masked = pol.algo in MASKED_ALGOS

        def predict(obs: Any, mask: np.ndarray) -> Any:
            kw = {"action_masks": mask} if masked else {}
            return pol.model.predict(pol._normalize(obs), deterministic=True, **kw)

        row["sb3_predict"] = _time(predict, states)
    return row


def card_size(c: dict[str, Any]) -> int:
    """The node count a zoo entry was trained at (its env's default under its preset)."""
    kwargs = dict(c.get("env_kwargs") or {})
    if c.get("preset"):
        kwargs.setdefault("scenario", c["preset"])
    data = c.get("test", {}).get("dataset") or SPLITS[c["env"]].test
    return int(make_env(c["env"], data, **kwargs).unwrapped.num_nodes)


def joined(models: list[str], dest: Path) -> Path:
    """A departure model at ``dest`` joining ``models``' networks, each with its threshold as
    its offset, as ``departure_members`` writes it (:func:`copy_members`; its own threshold 0)."""
    from rlsched.agents.models import read_meta
    from rlsched.train.departures import copy_members
    from rlsched.zoo import resolve_model_dir

    meta = read_meta(resolve_model_dir(models[0]))
    members, _ = copy_members(models, dest, str(meta["base"]))
    (dest / "meta.json").write_text(json.dumps({**meta, "threshold": 0.0, "members": members}))
    return dest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10,20,100")
    ap.add_argument("--decisions", type=int, default=2000)
    ap.add_argument("--json", default=None)
    ap.add_argument("--blas-threads", type=int, default=None,
                    help="override the acting path's one BLAS thread (a before/after check)")
    ap.add_argument("--entries", default=None, help="comma list of zoo entries (default: all)")
    ap.add_argument("--join", default=None,
                    help="comma list of departure model folders: time a model joining their "
                         "networks (an ensemble, departure_members) on the env and data of "
                         "the one --entries names, not the entry itself")  # fmt: skip
    args = ap.parse_args()
    pin_one_core()
    if args.join:
        (name,) = args.entries.split(",")
        with tempfile.TemporaryDirectory() as tmp:
            folder = joined(args.join.split(","), Path(tmp) / "joined")
            r = one(name, card(name), None, args.decisions, args.blas_threads, str(folder))
        r["joined"] = args.join.split(",")
        print(f"{len(r['joined'])} networks joined, on {name}'s env, {r['path']}: median "
              f"{r['act']['median_ms']:.3f} ms, p99 {r['act']['p99_ms']:.3f} ms; the env's "
              f"schedule {r.get('env_plan', {}).get('median_ms', 0):.3f} ms", flush=True)
        write_json(args.json, {"machine": machine(), "rows": [r]})
        return
    sizes = [int(s) for s in args.sizes.split(",") if s]
    rows = []
    for name in args.entries.split(",") if args.entries else names():
        c = card(name)
        takes_nodes = "num_nodes" in inspect.signature(env_class(c["env"])).parameters
        own = int(card_size(c)) if takes_nodes else None
        node = takes_nodes and c.get("policy_net") == "node"
        for size in [None, *(n for n in sizes if n != own)] if node else [None]:
            try:
                r = one(name, c, size, args.decisions, args.blas_threads)
            except PolicyError as e:  # a model whose other inputs have the node count
                print(f"{name} at {size} nodes: cannot act ({e})", flush=True)
                rows.append({"entry": name, "env": c["env"], "num_nodes": size,
                             "error": str(e)})  # fmt: skip
                continue
            sb3 = r.get("sb3_predict", {}).get("median_ms")
            scoring = r.get("act_scoring_every_decision", {}).get("median_ms")
            print(
                f"{name} at {r['num_nodes']} nodes ({r['actions']} actions), {r['path']}: "
                f"median {r['act']['median_ms']:.3f} ms, p99 {r['act']['p99_ms']:.3f} ms; "
                f"in its own play median {r['act_in_play']['median_ms']:.3f} ms, p99 "
                f"{r['act_in_play']['p99_ms']:.3f} ms"
                + (f"; PEFT's schedule fresh {r['env_plan']['median_ms']:.3f} ms, in the "
                   f"observation {r['env_plan_in_observation']['median_ms']:.3f} ms (p99 "
                   f"{r['env_plan_in_observation']['p99_ms']:.3f} ms, kept at "
                   f"{r['env_plan_in_observation']['kept_share']:.0%} of decisions)"
                   if "env_plan_in_observation" in r else "")
                + (f"; SB3 predict median {sb3:.3f} ms" if sb3 is not None else "")
                + (f"; scoring every decision median {scoring:.3f} ms" if scoring else "")
                + (f"; familiarity check median {r['guard_check']['median_ms']:.3f} ms, a "
                   f"workflow's first {r['guard_first_of_a_workflow']['median_ms']:.3f} ms"
                   if "guard_check" in r else "")
                + (f"; trial guard: a trial every {r['trial']['every']} decisions, median "
                   f"{r['trial']['median_ms']:.0f} ms (network won {r['trial']['network_won']} "
                   f"of {r['trial']['trials']}), the anchor's act "
                   f"{r['anchor_act']['median_ms']:.3f} ms "
                   f"({r['anchor_act_in_play']['median_ms']:.3f} ms in its own play); "
                   f"between trials, in play, following the network "
                   f"{r['between_trials_in_play']['network']['median_ms']:.3f} ms, the anchor "
                   f"{r['between_trials_in_play']['anchor']['median_ms']:.3f} ms"
                   if "trial" in r else ""),
                flush=True,
            )
            rows.append(r)
    # the BLAS threads the acting path ran with (LearnedPolicy limits them: rlsched.runtime)
    blas = sorted({i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"})
    write_json(args.json, {"machine": machine(), "row_budget": ROW_BUDGET, "blas_threads": blas,
                           "rows": rows})  # fmt: skip


if __name__ == "__main__":
    main()
