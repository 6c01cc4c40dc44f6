"""The simulator's compat="splitwise-sim" against splitwise-sim's own per-request output on two
slices of the Azure conv trace (tests/fixtures/fidelity/splitwise-sim, provenance there)."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rlsched.core.llm.simulator import LLMSimulator
from rlsched.data.azure_llm import load_requests
from rlsched.llm_runner import start_state_for

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "fidelity" / "splitwise-sim"
SLICES = ("300", "900")


def peer(slice_: str) -> dict[str, np.ndarray]:
    """splitwise-sim's detailed output: request id and latencies (s), one row per request."""
    with (FIXTURES / f"splitwise_conv_{slice_}_detailed.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    cols = {k: np.array([float(r[k]) for r in rows]) for k in rows[0]}
    cols["id"] = cols.pop("request_ids").astype(int)
    return cols


def simulate(slice_: str, compat: str | None) -> dict[str, np.ndarray]:
    # the peer's cluster: 2 prompt instances on DGX-H100, 3 token instances on DGX-A100, TP8
    sim = LLMSimulator(
        load_requests(FIXTURES / f"conv_{slice_}_shift1.csv"),
        start_state_for(None, prompt=2, token=3),
        sample_interval=0,
        compat=compat,
    )
    sim.run()
    return sim.request_table()


@pytest.mark.parametrize("slice_", SLICES)
def test_compat_reproduces_splitwise_sim_per_request(slice_: str) -> None:
    want, got = peer(slice_), simulate(slice_, "splitwise-sim")
    ids = want["id"]
    assert len(ids) == len(got["ttft"]) and (got["status"][ids] == 1).all()
    np.testing.assert_allclose(got["ttft"][ids], want["ttft_times"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(got["e2e"][ids], want["response_times"], rtol=0, atol=1e-3)
    # its TBT: (E2E - TTFT) / output tokens
    np.testing.assert_allclose(got["tbt"][ids], want["tbt_times"], rtol=0, atol=1e-5)


@pytest.mark.parametrize("slice_", SLICES)
def test_default_model_differs_where_documented(slice_: str) -> None:
    """rlsched's own readings: the same TTFT except for prompts under the first measured
    point (held, not extrapolated), longer decodes (read by batch size)."""
    want, got = peer(slice_), simulate(slice_, None)
    ids = want["id"]
    same = np.abs(got["ttft"][ids] - want["ttft_times"]) < 1e-9
    assert 0.9 < same.mean() < 1.0
    assert (want["prompt_sizes"][~same] < 128).mean() > 0.8  # the rest queued behind them
    assert np.median(got["e2e"][ids] / want["response_times"]) > 1.1


def test_cli_simulate_compat_writes_percentiles_and_requests(tmp_path: Path) -> None:
    out, table = tmp_path / "sim.json", tmp_path / "requests.csv"
    proc = subprocess.run(
        [
            sys.executable, "-c", "from rlsched.cli import main; main()", "simulate",
            "--trace", str(FIXTURES / "conv_300_shift1.csv"), "--prompt", "2", "--token", "3",
            "--compat", "splitwise-sim", "--json", str(out), "--requests-csv", str(table),
            "--no-progress",
        ],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    with table.open() as fh:
        rows = list(csv.DictReader(fh))
    want = peer("300")
    assert len(rows) == len(want["id"])
    ttft = np.array([float(rows[i]["ttft"]) for i in want["id"]])
    e2e = np.array([float(rows[i]["e2e"]) for i in want["id"]])
    np.testing.assert_allclose(ttft, want["ttft_times"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(e2e, want["response_times"], rtol=0, atol=1e-3)
    res = json.loads(out.read_text())
    assert res["config"]["compat"] == "splitwise-sim"
    for m in ("ttft", "tbt", "e2e"):
        col = np.array([float(r[m]) for r in rows])
        for p in (50, 90, 99):
            assert res[f"{m}_p{p}"] == pytest.approx(np.percentile(col, p), rel=1e-9)


def test_compat_is_checked() -> None:
    from rlsched.errors import ConfigError

    with pytest.raises(ConfigError, match="splitwise-sim"):
        LLMSimulator(load_requests(FIXTURES / "conv_300_shift1.csv"), compat="splitwise")
