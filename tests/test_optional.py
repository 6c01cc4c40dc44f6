"""Each missing optional dependency is reported where it is first needed, in one line naming
the install command of its extra (a missing module is simulated with ``sys.modules[m] = None``,
which makes ``import m`` raise ImportError)."""

from __future__ import annotations

import sys

import pytest

from rlsched.errors import MissingDependencyError, RlschedError
from rlsched.optional import EXTRAS, available, imported, install_hint, require


def _missing(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    for m in modules:
        monkeypatch.setitem(sys.modules, m, None)


def test_require_returns_the_module_when_installed() -> None:
    import json

    assert require("json", extra="serve") is json
    assert available("json")
    assert imported("json") is json


def test_imported_is_none_where_the_module_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    _missing(monkeypatch, "numba")  # the compiled kernels' optional path
    assert imported("numba") is None
    assert not available("numba")


def test_a_missing_module_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    # every level: an earlier test may have imported them all
    _missing(
        monkeypatch, "ortools", "ortools.sat", "ortools.sat.python", "ortools.sat.python.cp_model"
    )
    with pytest.raises(MissingDependencyError) as e:
        require("ortools.sat.python.cp_model", extra="solver")
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.endswith("pip install 'rlsched[solver]'")
    assert isinstance(e.value, RlschedError)  # the CLI prints it as one line, exit status 2
    assert not available("ortools")


def test_every_extra_has_a_hint() -> None:
    for extra in EXTRAS:
        assert install_hint(extra) == f"pip install 'rlsched[{extra}]'"
    with pytest.raises(ValueError, match="unknown extra"):
        require("json", extra="nope")


def test_the_cp_sat_solver_without_ortools(monkeypatch: pytest.MonkeyPatch) -> None:
    from rlsched.core.optimal import random_instance, solve

    _missing(
        monkeypatch, "ortools", "ortools.sat", "ortools.sat.python", "ortools.sat.python.cp_model"
    )
    with pytest.raises(MissingDependencyError, match=r"CP-SAT.*pip install 'rlsched\[solver\]'"):
        solve(random_instance(4, seed=0))


def test_the_wfcommons_generator_without_wfcommons(monkeypatch: pytest.MonkeyPatch) -> None:
    from rlsched.data import load_dataset

    _missing(monkeypatch, "wfcommons", "wfcommons.wfchef", "wfcommons.wfchef.recipes")
    with pytest.raises(MissingDependencyError, match=r"pip install 'rlsched\[workflows\]'"):
        load_dataset("wfcommons:blast?tasks=60&seed=123457")


def test_serving_without_fastapi(monkeypatch: pytest.MonkeyPatch) -> None:
    from rlsched.serve.server import require_serve_stack

    _missing(monkeypatch, "fastapi")
    with pytest.raises(MissingDependencyError, match=r"`rlsched serve` needs fastapi.*\[serve\]"):
        require_serve_stack()


def test_sweep_without_ray(monkeypatch: pytest.MonkeyPatch) -> None:
    from rlsched.sweep.runner import require_ray

    _missing(monkeypatch, "ray", "ray.tune")
    with pytest.raises(MissingDependencyError, match=r"`rlsched sweep` needs ray.*\[ray\]"):
        require_ray()


def test_training_without_tensorboard_warns_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from rlsched.train.config import TrainConfig
    from rlsched.train.trainer import _tensorboard

    _missing(monkeypatch, "tensorboard")
    with pytest.warns(UserWarning, match=r"pip install 'rlsched\[tensorboard\]'"):
        assert _tensorboard(TrainConfig(tensorboard=True)) is False
    assert _tensorboard(TrainConfig(tensorboard=False)) is False


def test_loaded_looks_a_module_up_once() -> None:
    import json

    from rlsched.optional import loaded

    assert loaded("json") is json and loaded("json") is loaded("json")
    assert loaded.cache_info().hits >= 2


def test_numpy_path_switches_the_compiled_paths_off_then_back_as_they_were() -> None:
    import types

    from rlsched.optional import numpy_path

    on, off = types.SimpleNamespace(COMPILED=True), types.SimpleNamespace(COMPILED=False)
    with pytest.raises(RuntimeError), numpy_path(on, off):
        assert on.COMPILED is False and off.COMPILED is False
        raise RuntimeError("restored even so")
    assert on.COMPILED is True and off.COMPILED is False
