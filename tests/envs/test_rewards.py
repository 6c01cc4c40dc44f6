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


def test_each_reward_is_registered_with_its_batched_form_bit_for_bit() -> None:
    import numpy as np

    from rlsched.envs.serverless_model import REWARDS, RewardWeights

    rng = np.random.default_rng(0)
    n = 500
    rfrt = 1.0 + rng.exponential(2.0, n)
    cost = rng.exponential(0.01, n)
    ref = rng.uniform(0.001, 0.05, n)
    slo = rng.random(n) < 0.3
    w = RewardWeights(beta=0.6, rfrt_max=4.0, slo_penalty=1.5, cost_weight=0.4)
    assert set(REWARDS) == {"latency_cost", "slo_cost"}
    for reward in REWARDS.values():
        assert reward.batched is not None
        batched = reward.batched(w)(rfrt, cost, ref, slo)
        assert batched.tolist() == reward.over(w, rfrt, cost, ref, slo).tolist()
