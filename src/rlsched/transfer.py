"""A zoo placement policy on cluster sizes it was not trained on.

The node-scoring network (``policy_net: node``) scores every node with the same weights, so one
model runs on any node count. Whether it still *decides well* there is a measurement:
:func:`transfer` runs the entry on its held-out test data at its training size and at other
sizes, every heuristic beside it on the same seeded episodes, and pairs it with the best
heuristic measured at each size (:func:`rlsched.evaluate.compare`). ``rlsched zoo transfer``
stores the result in the entry's card (``"transfer"``) and prints the Markdown table that
docs/results.md shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rlsched.envs.args import env_parameters
from rlsched.envs.make import make_env
from rlsched.evaluate import compare
from rlsched.report.leaderboard import main_mean
from rlsched.splits import TEST_SEED
from rlsched.zoo import PREFIX, card

#: The env contract's name for the number of nodes a policy chooses among (docs/envs.md).
SIZE_ARGUMENT = "num_nodes"


def _env_kwargs(c: dict[str, Any]) -> dict[str, Any]:
    kw = dict(c.get("env_kwargs") or {})
    if c.get("preset"):
        kw["scenario"] = c["preset"]
    return kw


def env_kwargs_at(c: dict[str, Any], n: int, trained: int) -> dict[str, Any]:
    """Card ``c``'s env arguments at ``n`` nodes. The trained size keeps the card's own: naming
    a size the card left to the env's draw (WorkflowOffloading draws 3-5 servers) would skip
    that draw and build another cluster of the same size."""
    base = _env_kwargs(c)
    return base if n == trained and SIZE_ARGUMENT not in base else {**base, SIZE_ARGUMENT: n}


def trained_size(name: str) -> int:
    """The node count the entry was trained at (its preset and env arguments)."""
    c = card(name)
    size_argument(c["env"])
    return _trained_size(c)


def _trained_size(c: dict[str, Any]) -> int:
    env = make_env(c["env"], c["test"]["dataset"], **_env_kwargs(c))
    return int(getattr(env.unwrapped, SIZE_ARGUMENT))


def size_argument(env_id: str) -> str:
    """``num_nodes``, when ``env_id`` takes it (a ValueError otherwise)."""
    if SIZE_ARGUMENT not in env_parameters(env_id):
        raise ValueError(f"{env_id} has no {SIZE_ARGUMENT} to vary")
    return SIZE_ARGUMENT


def transfer(
    name: str, sizes: Sequence[int], episodes: int = 10, seed: int = TEST_SEED
) -> dict[str, Any]:
    """The entry against the best heuristic at its training size and at each of ``sizes``.

    Returns ``{"dataset", "episodes", "seed", "size_argument", "trained_size", "rows"}``; a row
    is ``{"size", "trained", "reference", "reference_mean", "learned_mean", "paired"}`` with
    ``paired`` the learned policy's interval against the reference (:mod:`rlsched.stats`)."""
    if episodes < 2:
        raise ValueError(f"--episodes {episodes}: a paired interval needs at least 2 episodes")
    c = card(name)
    env_id, dataset = c["env"], c["test"]["dataset"]
    arg = size_argument(env_id)
    trained = _trained_size(c)
    spec = f"learned:{PREFIX}{name}"
    rows = []
    for n in dict.fromkeys([trained, *(int(s) for s in sizes)]):  # ordered, no repeats
        if n < 2:
            raise ValueError(f"--sizes: {n} nodes; a placement needs at least 2")
        kw = env_kwargs_at(c, n, trained)
        rep = compare(env_id, dataset, f"plain,{spec}", episodes=episodes, seed=seed,
                      env_kwargs=kw)
        by = {r["policy"]: r for r in rep["results"]}
        ref = by[rep["reference"]]
        learned = by[spec]
        rows.append(
            {
                "size": n,
                "trained": n == trained,
                "reference": rep["reference"],
                "reference_mean": main_mean(ref),
                "learned_mean": main_mean(learned),
                "main_metric": rep["main_metric"],
                "paired": learned.get("paired"),
            }
        )
    return {
        "dataset": dataset,
        "episodes": episodes,
        "seed": seed,
        "size_argument": arg,
        "trained_size": trained,
        "rows": rows,
    }


def markdown(name: str, result: dict[str, Any]) -> str:
    """The transfer table of one entry, as docs/results.md shows it."""
    lines = [
        f"`learned:zoo/{name}` on `{result['dataset']}` ({result['episodes']} episodes, seeds "
        f"{result['seed']}+; trained at {result['size_argument']}={result['trained_size']}):",
        "",
        f"| {result['size_argument']} | best heuristic there | learned | Δ learned − best "
        "[95% CI] | wins/ties/losses | verdict |",
        "|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        p = r["paired"] or {}
        ci = p.get("ci95") or [float("nan"), float("nan")]
        size = f"{r['size']}" + (" (trained)" if r["trained"] else "")
        lines.append(
            f"| {size} | {r['reference']} {r['reference_mean']:.3f} | {r['learned_mean']:.3f} | "
            f"{p.get('mean_diff', float('nan')):+.3f} [{ci[0]:+.3f}, {ci[1]:+.3f}] | "
            f"{p.get('wins', '-')}/{p.get('ties', '-')}/{p.get('losses', '-')} | "
            f"**{p.get('verdict', '-')}** |"
        )
    return "\n".join(lines) + "\n"
