"""The performance model: exact at the measured medians, monotone between, units in seconds."""

from __future__ import annotations

import csv
from collections import defaultdict
from importlib.resources import files

import numpy as np
import pytest

from rlsched.core.llm.perf_model import PerfModel
from rlsched.errors import ConfigError, DatasetError

CSV = str(files("rlsched.datasets").joinpath("llm", "splitwise_perf_model.csv"))


def medians() -> tuple[dict, dict, list[dict]]:
    """Independent re-reading: median prompt_time by batch tokens, token_time by batch size."""
    pt, tt = defaultdict(lambda: defaultdict(list)), defaultdict(lambda: defaultdict(list))
    with open(CSV) as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        key = (r["model"], r["hardware"], int(r["tensor_parallel"]))
        bt = int(r["prompt_size"]) * int(r["batch_size"])
        pt[key][bt].append(float(r["prompt_time"]))
        tt[key][int(r["batch_size"])].append(float(r["token_time"]))
    return pt, tt, rows


def test_hits_every_measured_median_exactly_in_seconds():
    m = PerfModel.load()
    pt, tt, _ = medians()
    assert len(m.configurations()) == 12
    for key in m.configurations():
        for bt, v in pt[key].items():
            assert m.prompt_time(bt, *key) == pytest.approx(np.median(v) / 1e3, rel=1e-12)
        for bs, v in tt[key].items():
            assert m.token_time(bs, *key) == pytest.approx(np.median(v) / 1e3, rel=1e-12)


def test_monotone_between_measured_points_and_outside():
    m = PerfModel.load()
    for key in m.configurations():
        for curve in (m.prompt_curve(*key), m.token_curve(*key)):
            x, y = curve.x, curve.y
            for j in range(len(x) - 1):
                mid = np.linspace(x[j], x[j + 1], 7)
                v = curve(mid)
                lo, hi = min(y[j], y[j + 1]), max(y[j], y[j + 1])
                assert np.all((v >= lo - 1e-15) & (v <= hi + 1e-15))
                assert np.all(np.diff(v) >= 0) or np.all(np.diff(v) <= 0)
            assert curve(x[0] / 4) == y[0]  # below the range: the first value
            above = curve(x[-1] * np.array([1.0, 1.5, 2.0, 8.0]))
            assert np.all(np.diff(above) >= 0)


def test_units_are_milliseconds_in_the_file():
    """e2e_time = prompt_time + token_size x token_time holds (median within 1 %) in ms."""
    _, _, rows = medians()
    ratios = [
        (float(r["prompt_time"]) + int(r["token_size"]) * float(r["token_time"]))
        / float(r["e2e_time"])
        for r in rows
        if r["token_size"] == "128" and r["batch_size"] == "1"
    ]
    assert np.median(ratios) == pytest.approx(1.0, abs=0.01)
    m = PerfModel.load()
    assert 0.05 < m.prompt_time(512, "llama2-70b", "a100-80gb", 8) < 0.15  # ~94 ms
    assert 0.03 < m.token_time(1, "llama2-70b", "a100-80gb", 8) < 0.06  # ~45 ms


def test_vectorised_and_cached_agree():
    m = PerfModel.load()
    bt = np.array([1, 100, 777, 2048, 5000, 40000])
    v = m.prompt_time(bt, "llama2-70b", "h100-80gb", 8)
    ptime, ttime = m.cached("llama2-70b", "h100-80gb", 8)
    assert [ptime(int(b)) for b in bt] == pytest.approx(list(v))
    assert ttime(100) == pytest.approx(m.token_time(100, "llama2-70b", "h100-80gb", 8))


def test_one_memo_per_configuration_shared_by_every_instance():
    """Every instance of one configuration reads one memo: what one interpolated, the next
    reads (a new instance used to start its own, empty)."""
    m = PerfModel.load()
    ptime, ttime = m.cached("llama2-70b", "h100-80gb", 8)
    assert m.cached("llama2-70b", "h100-80gb", 8) == (ptime, ttime)
    assert m.cached("llama2-70b", "a100-80gb", 8)[0] is not ptime
    before = ptime.cache_info().hits
    assert ptime(4321) == m.cached("llama2-70b", "h100-80gb", 8)[0](4321)
    assert ptime.cache_info().hits == before + 1


def test_unknown_configuration_and_bad_files(tmp_path):
    m = PerfModel.load()
    with pytest.raises(ConfigError, match="no performance data"):
        m.token_time(1, "llama2-70b", "a100-80gb", 3)
    bad = tmp_path / "perf.csv"
    bad.write_text(
        "model,hardware,prompt_size,batch_size,token_size,prompt_time,token_time,tensor_parallel\n"
        "llama2-70b,a100-80gb,512,1,128,x,50,8\n"
    )
    with pytest.raises(DatasetError) as e:
        PerfModel.load(bad)
    assert (e.value.line, e.value.field) == (2, "prompt_time")
