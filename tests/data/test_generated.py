"""Generated datasets: wfcommons recipes and the seeded synthetic generator."""

from __future__ import annotations

import random
import time

import numpy as np
import pytest

from rlsched.data import load_dataset
from rlsched.data.wfcommons_gen import RECIPES, generate, min_tasks
from rlsched.errors import DatasetError


def test_wfcommons_recipes_exist_in_installed_package() -> None:
    import wfcommons.wfchef.recipes as recipes

    for cls in RECIPES.values():
        assert hasattr(recipes, cls)


def test_wfcommons_is_deterministic_and_seed_dependent() -> None:
    a = load_dataset("wfcommons:epigenomics?tasks=100&seed=3")
    generate("montage", 60, 0)  # warm import; timing below is generation only
    t0 = time.perf_counter()
    b = generate("epigenomics", 100, 3)[0][0]
    assert time.perf_counter() - t0 < 5.0
    c = load_dataset("wfcommons:epigenomics?tasks=100&seed=4")
    wa = a.workflows[0]
    assert wa.tasks == b.tasks
    assert wa.tasks != c.workflows[0].tasks
    assert 90 <= len(wa) <= 100
    wa.topological_order()
    assert a.real_fields == {}
    assert "wfcommons" in a.derived_fields["exec_time"] or "recipe" in a.derived_fields["exec_time"]
    assert all(t.cores == 1 for t in wa.tasks)


def test_wfcommons_restores_global_random_state() -> None:
    random.seed(123)
    np.random.seed(123)
    expect = (random.random(), np.random.random())
    random.seed(123)
    np.random.seed(123)
    generate("srasearch", 30, 9)
    assert (random.random(), np.random.random()) == expect


def test_wfcommons_minimum_and_unknown_recipe() -> None:
    assert min_tasks("bwa") > 100
    with pytest.raises(DatasetError) as e:
        load_dataset("wfcommons:bwa?tasks=50")
    assert f">= {min_tasks('bwa')}" in str(e.value) and e.value.field == "tasks"
    with pytest.raises(DatasetError, match="available"):
        load_dataset("wfcommons:nope")


def test_wfcommons_several_workflows() -> None:
    ds = load_dataset("wfcommons:blast?tasks=50&workflows=3&seed=1")
    assert len(ds.workflows) == 3
    assert len({w.name for w in ds.workflows}) == 3


def test_synthetic_deterministic_and_valid() -> None:
    a = load_dataset("synthetic:placement?workflows=10&tasks=15&types=4&seed=7")
    from rlsched.data.synthetic import generate as synth

    b = synth(10, 15, 4, 7, 60.0)
    c = synth(10, 15, 4, 8, 60.0)
    assert [w.tasks for w in a.workflows] == [w.tasks for w in b]
    assert [w.tasks for w in a.workflows] != [w.tasks for w in c]
    assert len(a.workflows) == 10 and all(len(w) == 15 for w in a.workflows)
    assert len(a.type_names) <= 4
    subs = [w.submit_time for w in a.workflows]
    assert subs[0] == 0 and subs == sorted(subs)
    for w in a.workflows:
        order = w.topological_order()
        assert len(order) == 15
        assert sum(1 for t in w.tasks if t.parents) > 0
    assert a.real_fields == {}
    assert all(v.startswith("synthetic") for v in a.derived_fields.values())
    inst = a.instances()
    assert len(inst) == 150 and np.all(inst.exec_time > 0)


def test_synthetic_unknown_preset() -> None:
    with pytest.raises(DatasetError, match="placement"):
        load_dataset("synthetic:other")
