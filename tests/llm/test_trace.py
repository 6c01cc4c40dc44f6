"""Request traces: the Azure and Splitwise formats, registry names, transforms, bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rlsched.core.llm.trace import LLMRequests
from rlsched.data import load_dataset, resolve
from rlsched.data.azure_llm import load_requests, read_llm_trace
from rlsched.errors import DatasetError

AZURE = """TIMESTAMP,ContextTokens,GeneratedTokens
2023-11-16 18:15:46.6805900,374,44
2023-11-16 18:15:50.9951690,396,109
2023-11-16 18:15:51.2224670,879,55
"""
SPLITWISE = """\
request_id,request_type,application_id,arrival_timestamp,batch_size,prompt_size,token_size
0,2,0,0.5,1,100,10
1,2,0,1.25,2,200,20
2,2,0,3.0,1,300,1
"""


def write(tmp_path: Path, text: str, name: str = "t.csv") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_shipped_traces_load_by_name():
    ds = load_dataset("azure-llm:conv")
    assert ds.kind == "llm-requests" and ds.workflows == []
    r = ds.trace
    assert len(r) == 19366 and r.arrival[0] == 0.0
    assert np.all(np.diff(r.arrival) >= 0)
    assert r.prompt_tokens.min() >= 1 and r.output_tokens.min() >= 1
    s = ds.summary()
    assert s["kind"] == "llm-requests" and s["requests"] == 19366
    assert 3400 < s["span_s"] < 3600 and "CC-BY-4.0" in ds.license
    assert len(load_requests("code")) == 8819


def test_azure_format(tmp_path):
    r, fmt = read_llm_trace(write(tmp_path, AZURE))
    assert fmt == "azure"
    np.testing.assert_allclose(r.arrival, [0.0, 4.314579, 4.541877])
    assert r.prompt_tokens.tolist() == [374, 396, 879]
    assert r.output_tokens.tolist() == [44, 109, 55]


def test_splitwise_format_expands_batches(tmp_path):
    r, fmt = read_llm_trace(write(tmp_path, SPLITWISE))
    assert fmt == "splitwise"
    np.testing.assert_allclose(r.arrival, [0.0, 0.75, 0.75, 2.5])
    assert r.prompt_tokens.tolist() == [100, 200, 200, 300]
    assert r.output_tokens.tolist() == [10, 20, 20, 1]
    assert r.request_id.tolist() == [0, 1, 1, 2]


def test_user_path_via_registry_and_load_requests(tmp_path):
    p = write(tmp_path, SPLITWISE)
    assert resolve(f"azure-llm:{p}").startswith(f"azure-llm:{p}")
    a = load_dataset(f"azure-llm:{p}?rate_scale=2").trace
    np.testing.assert_allclose(a.arrival, [0.0, 0.375, 0.375, 1.25])
    b = load_requests(p, rate_scale=2)
    np.testing.assert_allclose(b.arrival, a.arrival)
    assert len(load_requests(str(p), duration=1.0)) == 3


def test_round_trip_both_formats(tmp_path):
    r = LLMRequests.from_arrays([0.0, 1.5, 2.25], [10, 20, 30], [1, 2, 3])
    for fmt in ("splitwise", "azure"):
        back, got = read_llm_trace(r.write_csv(tmp_path / f"{fmt}.csv", fmt=fmt))
        assert got == fmt
        np.testing.assert_allclose(back.arrival, r.arrival, atol=1e-6)
        assert back.prompt_tokens.tolist() == [10, 20, 30]


@pytest.mark.parametrize(
    ("text", "line", "field"),
    [
        (AZURE.replace("18:15:50.9951690", "18:61:50.99"), 3, "TIMESTAMP"),
        (AZURE.replace("396,109", "396,1.5"), 3, "GeneratedTokens"),
        (AZURE.replace("879,55", "-4,55"), 4, "ContextTokens"),
        (AZURE.replace("879,55", "abc,55"), 4, "ContextTokens"),
        (AZURE.replace("396,109", "396"), 3, "GeneratedTokens"),
        (SPLITWISE.replace("1,2,0,1.25", "1,1,0,1.25"), 3, "request_type"),
        (SPLITWISE.replace("0.5,1,100", "nan,1,100"), 2, "arrival_timestamp"),
        (SPLITWISE.replace("3.0,1,300,1", "3.0,0,300,1"), 4, "batch_size"),
        (SPLITWISE.replace("3.0,1,300,1", "3.0,1,300,0"), 4, "token_size"),
    ],
)
def test_malformed_rows_name_file_line_field(tmp_path, text, line, field):
    p = write(tmp_path, text)
    with pytest.raises(DatasetError) as e:
        read_llm_trace(p)
    assert (e.value.line, e.value.field) == (line, field)
    assert str(e.value).startswith(f"{p}:{line}: field '{field}'")


def test_unknown_header_and_empty(tmp_path):
    with pytest.raises(DatasetError, match="unrecognised header") as e:
        read_llm_trace(write(tmp_path, "a,b,c\n1,2,3\n"))
    assert e.value.line == 1
    with pytest.raises(DatasetError, match="no requests"):
        read_llm_trace(write(tmp_path, "TIMESTAMP,ContextTokens,GeneratedTokens\n"))
    with pytest.raises(DatasetError, match="not found"):
        load_requests(tmp_path / "missing.csv")


def test_bad_parameters():
    with pytest.raises(DatasetError, match="rate_scale"):
        load_dataset("azure-llm:conv?rate_scale=0")
    with pytest.raises(DatasetError, match="poisson"):
        load_dataset("azure-llm:conv?poisson=2")
    with pytest.raises(DatasetError, match="unknown parameter"):
        load_dataset("azure-llm:conv?speed=2")


def test_rate_scaling_halves_inter_arrival_times():
    base = load_requests("conv")
    fast = load_requests("conv", rate_scale=2.0)
    np.testing.assert_allclose(np.diff(fast.arrival), np.diff(base.arrival) / 2)
    np.testing.assert_array_equal(fast.prompt_tokens, base.prompt_tokens)


def test_poisson_resampling_is_seeded_and_keeps_count_and_rate():
    base = load_requests("conv")
    a = load_requests("conv", poisson=True, seed=1)
    b = load_requests("azure-llm:conv?poisson=1&seed=1")
    c = load_requests("conv", poisson=True, seed=2)
    np.testing.assert_array_equal(a.arrival, b.arrival)
    assert not np.array_equal(a.arrival, c.arrival)
    assert len(a) == len(base)
    np.testing.assert_array_equal(a.output_tokens, base.output_tokens)
    assert a.span == pytest.approx(base.span, rel=0.05)
    gaps = np.diff(a.arrival)
    assert gaps.std() / gaps.mean() == pytest.approx(1.0, abs=0.05)  # exponential gaps


def _dispersion(arrival: np.ndarray, window: float) -> float:
    """Variance over mean of the arrivals per ``window`` seconds (1 for a Poisson process)."""
    counts = np.bincount(((arrival - arrival[0]) // window).astype(int))[:-1]
    return float(counts.var() / counts.mean())


def test_bursty_resampling_keeps_count_rate_and_sizes_and_bunches_arrivals():
    reqs = load_requests("conv")
    poisson = reqs.resample_poisson(3)
    bursty = reqs.resample_bursty(3, sigma=0.75, window=30.0)
    assert len(bursty) == len(reqs)
    assert bursty.arrival[0] == poisson.arrival[0]
    assert np.isclose(bursty.span, poisson.span)  # the same mean rate
    assert np.all(np.diff(bursty.arrival) >= 0)
    np.testing.assert_array_equal(bursty.prompt_tokens, reqs.prompt_tokens)
    np.testing.assert_array_equal(bursty.output_tokens, reqs.output_tokens)
    # per 30 s: Poisson's counts have variance ~ mean; the Cox process's far more
    assert 0.7 < _dispersion(poisson.arrival, 30.0) < 1.5
    assert _dispersion(bursty.arrival, 30.0) > 5.0
    again = reqs.resample_bursty(3, sigma=0.75, window=30.0)
    np.testing.assert_array_equal(again.arrival, bursty.arrival)  # seeded
    zero = reqs.resample_bursty(3, sigma=0.0)
    np.testing.assert_array_equal(zero.arrival, poisson.arrival)
    with pytest.raises(ValueError, match="burst sigma"):
        reqs.resample_bursty(3, sigma=-1.0)


def test_duration_keeps_the_first_seconds():
    r = load_requests("conv", rate_scale=2.0, duration=100.0)
    assert r.arrival.max() < 100.0
    full = load_requests("conv", rate_scale=2.0)
    assert len(r) == int(np.sum(full.arrival < 100.0))
    assert len(load_dataset("azure-llm:conv?rate_scale=2&duration=100").trace) == len(r)


def test_a_time_window_keeps_the_recorded_seconds_before_any_transform():
    full = load_requests("code")
    early = load_dataset("azure-llm:code?end=1800").trace
    late = load_dataset("azure-llm:code?start=1800").trace
    assert len(early) + len(late) == len(full)  # a partition
    assert len(early) == int(np.sum(full.arrival < 1800.0))
    np.testing.assert_array_equal(late.prompt_tokens, full.prompt_tokens[full.arrival >= 1800.0])
    assert early.arrival[0] == late.arrival[0] == 0.0  # each starts at 0
    # the window is taken from the recorded trace, then the rate scaled: 2x halves its span
    fast = load_dataset("azure-llm:code?start=1800&rate_scale=2").trace
    assert len(fast) == len(late)
    np.testing.assert_allclose(fast.arrival, late.arrival / 2)


@pytest.mark.parametrize(
    ("params", "field"),
    [("start=-1", "start"), ("start=100&end=50", "end"), ("start=5000", "start"), ("end=x", "end")],
)
def test_a_bad_time_window_names_its_parameter(params, field):
    with pytest.raises(DatasetError, match=f"field '{field}'"):
        load_dataset(f"azure-llm:code?{params}")
