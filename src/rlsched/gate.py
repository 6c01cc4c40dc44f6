"""Choose a learned policy's margin gate on validation data (``rlsched gate``).

A node-scoring model gated by a heuristic (``learned:PATH?anchor=H&margin=M``,
:class:`~rlsched.policies.learned.LearnedPolicy`) leaves ``H``'s choice only where its logit
beats it by ``M``. Which ``M`` is a model choice, so it is made on validation data, never on
test data: :func:`choose_margin` plays the model at every margin given and every heuristic that
does not search on the same seeded episodes (:func:`rlsched.evaluate.compare`) and applies one
rule, the one the zoo's rounds W6 and L3 committed to:

1. eligible: not significantly worse than the best heuristic measured there (paired 95%);
2. kept: the eligible margin with the best mean main metric; equal means go to the larger
   margin (the one closer to the heuristic); none eligible: none kept.

:func:`write_gate` stores the kept gate in the model folder (``meta.json`` ``gate``), which
``learned:PATH`` then plays.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rlsched.agents.models import read_meta, resolve_model_dir
from rlsched.errors import ConfigError
from rlsched.evaluate import compare
from rlsched.report.leaderboard import main_mean
from rlsched.splits import check_validation


def gated_spec(model: str | Path, anchor: str, margin: float) -> str:
    """``learned:MODEL?anchor=ANCHOR&margin=MARGIN``."""
    return f"learned:{model}?anchor={anchor}&margin={margin:g}"


def parse_margins(text: str) -> list[float]:
    """``"0,0.5,1"`` -> ``[0.0, 0.5, 1.0]``: numbers >= 0 (``inf`` allowed), at least one, no
    repeats; a :class:`ConfigError` naming the bad one otherwise."""
    out: list[float] = []
    for part in (p.strip() for p in text.split(",")):
        try:
            m = float(part)
        except ValueError:
            m = math.nan
        if not m >= 0:  # NaN too
            raise ConfigError(f"--margins {text!r}: {part!r} is not a number >= 0")
        if m in out:
            raise ConfigError(f"--margins {text!r}: {part!r} is given twice")
        out.append(m)
    if not out:
        raise ConfigError("--margins: give at least one margin")
    return out


def choose_margin(
    model: str | Path,
    anchor: str,
    margins: Sequence[float],
    dataset: str,
    episodes: int,
    seed: int,
    env_kwargs: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The rule of the module docstring on ``episodes`` episodes of ``dataset`` (seeds
    ``seed``+), in the model's env with its training arguments updated by ``env_kwargs``.
    Returns ``{"env", "dataset", "episodes", "seed", "anchor", "reference", "main_metric",
    "direction", "margins": [{"margin", "mean", "paired"}], "kept"}`` (``kept``: a margin or
    None). A dataset that shares data with the env's test set is refused."""
    path = resolve_model_dir(model)
    meta = read_meta(path)
    env_id = str(meta["env_id"])
    check_validation(env_id, dataset, source="rlsched gate --dataset")
    kwargs = {**dict(meta.get("env_kwargs") or {}), **(env_kwargs or {})}
    specs = {gated_spec(path, anchor, m): float(m) for m in margins}
    rep = compare(env_id, dataset, ["plain", *specs], episodes, seed, kwargs)
    rows = {r["policy"]: r for r in rep["results"]}
    sign = 1.0 if rep["direction"] == "higher" else -1.0
    out = [
        {"margin": m, "mean": main_mean(rows[s]), "paired": rows[s].get("paired")}
        for s, m in specs.items()
    ]
    eligible = [r for r in out if r["paired"] is None or r["paired"]["verdict"] != "worse"]
    kept = max(eligible, key=lambda r: (sign * r["mean"], r["margin"]), default=None)
    return {
        "env": env_id, "dataset": dataset, "episodes": episodes, "seed": seed,
        "anchor": anchor, "reference": rep["reference"], "main_metric": rep["main_metric"],
        "direction": rep["direction"], "margins": out,
        "kept": None if kept is None else kept["margin"],
    }  # fmt: skip


def write_gate(model: str | Path, anchor: str, margin: float) -> Path:
    """Store the gate in the model folder's ``meta.json`` (``"gate": {"anchor", "margin"}``),
    which ``learned:PATH`` then plays; returns the file written."""
    path = resolve_model_dir(model) / "meta.json"
    meta = json.loads(path.read_text())
    meta["gate"] = {"anchor": anchor, "margin": float(margin)}
    path.write_text(json.dumps(meta, indent=2))
    return path
