"""A sweep's leaderboard: read the finished trials of a results folder and write the tables
(:mod:`rlsched.report.leaderboard` builds and renders them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rlsched.errors import ConfigError
from rlsched.report.html import sweep_html
from rlsched.report.leaderboard import (
    SAMPLE_UNIT,
    _json_safe,
    sweep_csv,
    sweep_markdown,
    sweep_tables,
)
from rlsched.sweep.config import SweepConfig
from rlsched.sweep.trial import read_result


def load_sweep_results(results_dir: str | Path, all_trials: bool = False) -> list[dict[str, Any]]:
    """Finished trials' ``result.json`` under ``results_dir/trials/``, by trial id: those of the
    latest sweep run (listed in ``trials.json``), or every one with ``all_trials`` (or when
    there is no ``trials.json``)."""
    root = Path(results_dir)
    wanted: set[str] | None = None
    if not all_trials and (root / "trials.json").is_file():
        try:
            wanted = {t["id"] for t in json.loads((root / "trials.json").read_text())}
        except (OSError, ValueError, KeyError, TypeError):
            wanted = None
    out = []
    folders = sorted(p for p in (root / "trials").glob("*") if p.is_dir())
    for folder in folders:
        if wanted is not None and folder.name not in wanted:
            continue
        r = read_result(folder)
        if r is not None:
            out.append(r)
    return out


def write_sweep_leaderboard(
    results_dir: str | Path,
    out_dir: str | Path | None = None,
    reference: str | dict[str, str] | None = None,
    all_trials: bool = False,
) -> tuple[list[dict[str, Any]], dict[str, Path]]:
    """Read ``results_dir``'s finished trials (see :func:`load_sweep_results`) and write
    ``leaderboard.{csv,md,html,json}`` to ``out_dir`` (default ``results_dir/leaderboard``).
    ``reference`` None: the sweep config's (``results_dir/sweep.yaml``). Returns the tables and
    the paths written."""
    root = Path(results_dir)
    results = load_sweep_results(root, all_trials=all_trials)
    if not results:
        raise ConfigError(f"{root}: no finished trials (trials/*/result.json)")
    if reference is None:
        reference = sweep_references(root)
    tables = sweep_tables(results, reference)
    out = Path(out_dir) if out_dir is not None else root / "leaderboard"
    out.mkdir(parents=True, exist_ok=True)
    title = f"Leaderboard: {root.resolve().name}"
    paths = {
        "csv": out / "leaderboard.csv",
        "md": out / "leaderboard.md",
        "html": out / "leaderboard.html",
        "json": out / "leaderboard.json",
    }
    paths["csv"].write_text(sweep_csv(tables))
    paths["md"].write_text(sweep_markdown(tables, title))
    paths["html"].write_text(sweep_html(tables, title))
    paths["json"].write_text(
        json.dumps(_json_safe({"sample_unit": SAMPLE_UNIT, "tables": tables}), indent=2)
    )
    return tables, paths


def sweep_references(results_dir: str | Path) -> dict[str, str]:
    """Env id -> reference policy from ``results_dir/sweep.yaml`` (empty if none)."""
    f = Path(results_dir) / "sweep.yaml"
    if not f.is_file():
        return {}
    try:
        return SweepConfig.from_yaml(f).references()
    except Exception:  # an old or hand-edited config: no reference rather than no leaderboard
        return {}
