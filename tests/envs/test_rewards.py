import pytest

from rlsched.envs.serverless_model import (
    PlacementOutcome,
    RewardWeights,
    latency_cost,
    slo_cost,
)


def test_latency_cost_is_the_design_note_formula() -> None:
    w = RewardWeights(beta=0.7, rfrt_min=1.0, rfrt_max=5.0)
    o = PlacementOutcome(rfrt=3.0, cost_delta=0.25, cost_ref=1.0, slo_violated=False)
    assert latency_cost(o, w) == pytest.approx(-(0.7 * 0.5 + 0.3 * 0.25))


def test_latency_cost_clips_both_terms() -> None:
    w = RewardWeights()
    o = PlacementOutcome(rfrt=50.0, cost_delta=9.0, cost_ref=1.0, slo_violated=True)
    assert latency_cost(o, w) == pytest.approx(-1.0)
    o = PlacementOutcome(rfrt=1.0, cost_delta=0.0, cost_ref=1.0, slo_violated=False)
    assert latency_cost(o, w) == 0.0


def test_slo_cost_penalises_violations() -> None:
    w = RewardWeights(slo_penalty=1.0, cost_weight=0.5)
    ok = PlacementOutcome(2.0, 0.5, 1.0, False)
    bad = PlacementOutcome(2.0, 0.5, 1.0, True)
    assert slo_cost(ok, w) == pytest.approx(-0.25)
    assert slo_cost(bad, w) == pytest.approx(-1.25)
