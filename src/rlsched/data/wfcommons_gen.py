"""Synthetic workflows from the ``wfcommons`` WfChef recipes (fitted to real WfInstances).

``wfcommons:epigenomics?tasks=100&seed=3&workflows=1``. Generation is offline. wfcommons draws
from the global ``random`` and ``numpy.random`` generators, so we seed both from ``seed`` and
restore their previous state afterwards: the same name always gives the same workflows and the
caller's random streams are untouched. (wfcommons also names files with ``uuid4``; file names do
not reach rlsched, only their sizes do.)

``tasks`` is wfcommons' ``num_tasks``: an upper bound that counts its two sentinel nodes, so a
generated workflow has a few tasks fewer. Each recipe grows one of its base graphs and cannot go
below the smallest one (e.g. bwa needs ``tasks >= 106``).
"""

from __future__ import annotations

import json
import logging
import random
from collections import Counter
from functools import cache
from typing import Any

import numpy as np

from rlsched.core.workload import Workflow
from rlsched.data._util import int_param
from rlsched.data.dataset import Dataset
from rlsched.data.registry import register
from rlsched.data.wfformat import dataset_from_parts, parse_wfformat_counts
from rlsched.errors import DatasetError
from rlsched.optional import require
from rlsched.suggest import did_you_mean

#: ``wfcommons:<recipe>`` -> class name in :mod:`wfcommons.wfchef.recipes` (wfcommons 1.6).
RECIPES: dict[str, str] = {
    "blast": "BlastRecipe",
    "bwa": "BwaRecipe",
    "cycles": "CyclesRecipe",
    "epigenomics": "EpigenomicsRecipe",
    "genome": "GenomeRecipe",
    "1000genome": "GenomeRecipe",
    "montage": "MontageRecipe",
    "rnaseq": "RnaseqRecipe",
    "seismology": "SeismologyRecipe",
    "soykb": "SoykbRecipe",
    "srasearch": "SrasearchRecipe",
}


def _recipe_class(recipe: str, source: str) -> Any:
    if recipe not in RECIPES:
        raise DatasetError(
            f"unknown wfcommons recipe {recipe!r}{did_you_mean(recipe, RECIPES)}; "
            f"available: {', '.join(RECIPES)}",
            source=source,
        )
    mod = require("wfcommons.wfchef.recipes", extra="workflows", what=f"the {source} generator")
    cls = getattr(mod, RECIPES[recipe], None)
    if cls is None:  # pragma: no cover - depends on the installed wfcommons
        raise DatasetError(f"installed wfcommons has no {RECIPES[recipe]}", source=source)
    return cls


GENERATED = {
    "type": "recipe task type (command.program)",
    "exec_time": "runtimeInSeconds sampled from the recipe's distributions fitted to real runs",
    "cpu_request": "coreCount = 1, which wfcommons sets on every generated task",
    "arrival_time": "earliest start (longest chain of parent runtimes); generated workflows "
    "have no submit time",
}


@cache
def min_tasks(recipe: str) -> int:
    """Smallest ``tasks`` the recipe accepts: the order of its smallest base graph."""
    cls = _recipe_class(recipe, f"wfcommons:{recipe}")
    summary = cls.from_num_tasks(10_000).this_dir.joinpath("microstructures", "summary.json")
    graphs = json.loads(summary.read_text())["base_graphs"].values()
    return int(min(g["order"] for g in graphs))


def generate(
    recipe: str, tasks: int, seed: int, workflows: int = 1
) -> list[tuple[Workflow, Counter[str]]]:
    """Generate ``workflows`` instances deterministically from ``seed``."""
    source = f"wfcommons:{recipe}?tasks={tasks}&seed={seed}"
    cls = _recipe_class(recipe, source)
    lo = min_tasks(recipe)
    if tasks < lo:
        raise DatasetError(
            f"the {recipe} recipe needs tasks >= {lo} (its smallest base graph)",
            source=source,
            field="tasks",
        )
    wfgen = require("wfcommons.wfgen", extra="workflows", what=f"the {source} generator")
    WorkflowGenerator = wfgen.WorkflowGenerator

    py_state, np_state = random.getstate(), np.random.get_state()
    log = logging.getLogger("wfcommons")
    level = log.level
    log.setLevel(logging.ERROR)  # it warns about every file it re-sizes
    try:
        random.seed(seed)
        np.random.seed(seed % 2**32)
        out = []
        for k in range(workflows):
            gen = WorkflowGenerator(cls.from_num_tasks(tasks))
            wf = gen.build_workflow(f"{recipe}-{tasks}-s{seed}-{k}")
            wf.generate_json()
            out.append(parse_wfformat_counts(wf.workflow_json, source, name=wf.name))
        return out
    finally:
        random.setstate(py_state)
        np.random.set_state(np_state)
        log.setLevel(level)


def load_wfcommons(path: str, params: dict[str, str]) -> Dataset:
    source = f"wfcommons:{path}"
    tasks = int_param(params, "tasks", source, minimum=1, default=100)
    seed = int_param(params, "seed", source, minimum=0, default=0)
    n = int_param(params, "workflows", source, minimum=1, default=1)
    assert tasks is not None and seed is not None and n is not None
    parts = generate(path, tasks, seed, n)
    wfcommons = require("wfcommons", extra="workflows")

    ds = dataset_from_parts(
        source,
        parts,
        description=(
            f"{n} synthetic {path} workflow(s) of up to {tasks} tasks from the "
            f"wfcommons {wfcommons.__version__} WfChef recipe, seed {seed}"
        ),
        source=f"wfcommons {wfcommons.__version__} {RECIPES[path]}",
        license="LGPL-3.0 (wfcommons)",
    )
    # Nothing here is measured: every field is sampled by the recipe or derived from samples.
    derived = {k: f"generated by the wfcommons recipe: {v}" for k, v in ds.real_fields.items()}
    derived.update(ds.derived_fields)
    derived.update(GENERATED)
    ds.real_fields, ds.derived_fields = {}, derived
    for wf in ds.workflows:
        wf.real_fields, wf.derived_fields = {}, derived
    return ds


register(
    "wfcommons",
    load_wfcommons,
    "Synthetic workflows generated offline by wfcommons WfChef recipes fitted to real traces: "
    + ", ".join(RECIPES)
    + " (tasks = upper bound incl. 2 sentinels; seeded, deterministic)",
    ["wfcommons:epigenomics?tasks=100&seed=3", "wfcommons:montage?tasks=200&seed=0&workflows=3"],
    "LGPL-3.0 (wfcommons)",
    params={"tasks": "100", "seed": "0", "workflows": "1"},
)
