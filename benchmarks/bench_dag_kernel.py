"""The whole-workflow network's compiled forward (``rlsched.agents.dag_kernels.score_one``)
of another checkout beside this one's, in one process pinned to one core: the same stored
observations of each entry's play, each kernel timed back to back, the two alternating.

A kernel change that is not bit-exact (another summation order) is checked here on what the
shipped entries score: the largest score difference and how often the best-scored server
differs. ``bench_zoo_rows.py`` then checks the play itself, ``bench_decide.py`` the act.

    git worktree add /tmp/before REV
    python benchmarks/bench_dag_kernel.py --before /tmp/before [--states 600] [--json F]
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench_decide import _states
from common import machine, pin_one_core, write_json
from rlsched.evaluate import make_env
from rlsched.policies.registry import make_policy
from rlsched.policies.trial import TrialGuard
from rlsched.splits import SPLITS
from rlsched.zoo import card, names

_DAG_ENTRIES = ("workflow-small-dag-single-net", "workflow-congested-vetted")


def _kernel_of(checkout: Path) -> Any:
    """``score_one`` of ``checkout``'s ``dag_kernels.py``, loaded under another name."""
    path = checkout / "src/rlsched/agents/dag_kernels.py"
    spec = importlib.util.spec_from_file_location("before_dag_kernels", path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.score_one


def _weights_for(kernel: Any, scorer: Any) -> tuple[np.ndarray, ...]:
    """``scorer``'s kernel weights in the layout ``kernel`` takes: before git b6f7996 each
    round's first layer came as three arguments, one block each."""
    _, weights = scorer._kernel
    if "w_own" not in inspect.signature(kernel.py_func).parameters:
        return weights
    h = scorer.hidden
    first = [scorer.w[f"rounds.{r}.0.weight"].T for r in range(scorer.rounds)]

    def c(a: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(a, np.float32)

    blocks = [c(np.stack([a[i * h : (i + 1) * h] for a in first])) for i in range(3)]
    return (*weights[:4], *blocks, *weights[5:])


def one(name: str, before: Any, n: int, repeats: int) -> dict[str, Any]:
    c = card(name)
    kwargs = dict(c.get("env_kwargs") or {})
    if c.get("preset"):
        kwargs.setdefault("scenario", c["preset"])
    env = make_env(c["env"], (c.get("test") or {}).get("dataset") or SPLITS[c["env"]].test,
                   **kwargs)  # fmt: skip
    outer = make_policy(f"learned:zoo/{name}", env, seed=0)
    pol = outer.policy if isinstance(outer, TrialGuard) else outer
    scorer = pol.scorer
    after, weights = scorer._kernel
    old_weights = _weights_for(before, scorer)
    inputs = [scorer.kernel_inputs(obs) for obs, _ in _states(env, n)]
    flags = (0, scorer.relative_data, scorer.plan)
    old = [before(*x, *flags, *old_weights) for x in inputs]
    new = [after(*x, *flags, *weights) for x in inputs]
    pairs = list(zip(old, new, strict=True))
    times: dict[str, list[float]] = {"before": [], "after": []}
    for _ in range(repeats):  # alternating: the machine's drift falls on both
        for label, kernel, w in (("before", before, old_weights), ("after", after, weights)):
            t = []
            for x in inputs:
                start = time.perf_counter()
                kernel(*x, *flags, *w)
                t.append(time.perf_counter() - start)
            times[label].append(statistics.median(t) * 1e3)
    return {
        "entry": name, "states": len(inputs), "hidden": scorer.hidden, "rounds": scorer.rounds,
        "tasks_median": statistics.median(int(np.count_nonzero(x[0][:, 11])) for x in inputs),
        "max_abs_score_diff": max(float(np.max(np.abs(a - b))) for a, b in pairs),
        "best_server_differs": sum(int(np.argmax(a) != np.argmax(b)) for a, b in pairs),
        "median_ms": {k: statistics.median(v) for k, v in times.items()},
        "repeat_medians_ms": times,
    }  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required=True, help="the other checkout")
    ap.add_argument("--states", type=int, default=600)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    pin_one_core()
    before = _kernel_of(args.before)
    shipped = set(names())
    rows = [one(n, before, args.states, args.repeats) for n in _DAG_ENTRIES if n in shipped]
    for r in rows:
        m = r["median_ms"]
        print(f"{r['entry']} (H={r['hidden']}, {r['rounds']} rounds, {r['tasks_median']} tasks "
              f"median): before {m['before']:.4f} ms, after {m['after']:.4f} ms median over "
              f"{r['states']} states; scores differ by at most {r['max_abs_score_diff']:.2e}, "
              f"best server differs at {r['best_server_differs']}")  # fmt: skip
    write_json(str(args.json) if args.json else None,
               {"machine": machine(), "before": str(args.before), "rows": rows})


if __name__ == "__main__":
    main()
