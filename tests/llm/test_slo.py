"""SLO limits, per-request attainment and Splitwise's percentile checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlsched.core.llm.slo import SLOConfig, percentile, slowdowns, unloaded_latencies
from rlsched.errors import ConfigError


def sd(ttft, tbt=None, e2e=None):
    ttft = np.asarray(ttft, float)
    return {
        "ttft": ttft,
        "tbt": np.ones_like(ttft) if tbt is None else np.asarray(tbt, float),
        "e2e": np.ones_like(ttft) if e2e is None else np.asarray(e2e, float),
    }


def test_defaults_are_splitwise_limits():
    s = SLOConfig()
    assert s.limits(50) == {"ttft": 2.0, "tbt": 1.25, "e2e": 1.25}
    assert s.limits(90) == {"ttft": 3.0, "tbt": 1.5, "e2e": 1.5}
    assert s.limits(99) == {"ttft": 6.0, "tbt": 5.0, "e2e": 5.0}
    assert s.attainment_level == 90.0


def test_attainment_and_percentile_checks():
    s = SLOConfig()
    # 100 requests: TTFT slowdown 1 for 85, 2.5 for 10, 7 for 5
    x = sd([1.0] * 85 + [2.5] * 10 + [7.0] * 5)
    out = s.evaluate(x)
    assert out["slo_attainment_p50"] == 0.85
    assert out["slo_attainment_p90"] == out["slo_attainment"] == 0.95
    assert out["slo_attainment_p99"] == 0.95
    c = out["slo_checks"]
    assert c["ttft_p50"]["slowdown"] == 1.0 and c["ttft_p50"]["ok"]
    assert c["ttft_p90"]["slowdown"] == 2.5 and c["ttft_p90"]["ok"]
    assert c["ttft_p99"]["slowdown"] == 7.0 and not c["ttft_p99"]["ok"]
    assert out["slo_met"] is False
    ok = s.evaluate(sd([1.0] * 95 + [2.5] * 5))
    assert ok["slo_met"] is True


def test_dropped_requests_count_as_misses():
    s = SLOConfig()
    out = s.evaluate(sd([1.0] * 9), dropped=1)
    assert out["slo_attainment"] == 0.9
    assert out["slo_checks"]["e2e_p99"]["slowdown"] == np.inf and not out["slo_met"]
    assert np.isnan(s.evaluate(sd([]))["slo_attainment"])


def test_custom_limits_and_validation():
    s = SLOConfig(
        ttft=(1.5, 2.0), tbt=(1.1, 1.2), e2e=(1.1, 1.2), percentiles=(50, 90), attainment_level=50
    )
    assert s.evaluate(sd([1.4, 1.6]))["slo_attainment"] == 0.5
    with pytest.raises(ConfigError):
        SLOConfig(ttft=(2.0, 3.0))
    with pytest.raises(ConfigError):
        SLOConfig(attainment_level=75)


def test_unloaded_latencies_and_slowdowns():
    u = unloaded_latencies(
        np.array([100, 200]), np.array([1, 11]), lambda p: p / 1000.0, 0.05, 1e-4, 0.002, True
    )
    np.testing.assert_allclose(u["ttft"], [0.1, 0.2])
    xfer = 201 * 1e-4 + 0.002
    np.testing.assert_allclose(u["e2e"], [0.1, 0.2 + xfer + 10 * 0.05])
    np.testing.assert_allclose(u["tbt"], [0.0, (xfer + 0.5) / 10])
    s = slowdowns({"ttft": u["ttft"] * 2, "tbt": u["tbt"] * 3, "e2e": u["e2e"]}, u)
    np.testing.assert_allclose(s["ttft"], [2, 2])
    np.testing.assert_allclose(s["tbt"], [1, 3])  # one output token: slowdown 1


def test_percentile_is_numpys_to_the_bit():
    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 10, 11, 57, 64, 65, 400):  # sorted up to 64 values, partitioned above
        for _ in range(50):
            x = rng.lognormal(0.0, 1.0, n) * 10 ** rng.uniform(-3, 3)
            for q in (10.0, 50.0, 90.0, 99.0, 100.0, 0.0):
                assert percentile(x, q) == float(np.percentile(x, q)), (n, q)
    ties = np.round(rng.lognormal(0.0, 1.0, 200), 1)
    assert percentile(ties, 90.0) == float(np.percentile(ties, 90.0))
    assert math.isnan(percentile(np.array([1.0, math.nan, 2.0]), 90.0))
    long = rng.lognormal(0.0, 1.0, 300)
    long[123] = math.nan
    assert math.isnan(percentile(long, 50.0))
    for n in (5, 300):  # a list (the service's latency log) as an array
        x = rng.lognormal(0.0, 1.0, n).tolist()
        assert percentile(x, 99.0) == float(np.percentile(x, 99.0))


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # numpy's own inf - inf
def test_percentile_of_infinite_slowdowns_is_numpys():
    """Infinite values give numpy's value too, NaN where numpy's interpolation gives NaN."""
    rng = np.random.default_rng(1)
    for n in (1, 2, 5, 10, 33):
        for _ in range(40):
            x = rng.lognormal(0.0, 1.0, n)
            x[rng.integers(0, n, size=rng.integers(1, n + 1))] = np.inf
            for q in (50.0, 90.0, 99.0):
                a, b = percentile(x, q), float(np.percentile(x, q))
                assert a == b or (math.isnan(a) and math.isnan(b)), (n, q, a, b)
