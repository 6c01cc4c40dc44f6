"""Paired verdicts on constructed cases whose answer is known."""

import numpy as np
import pytest

from rlsched import stats


def _ref(n: int = 20, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(10.0, 3.0, n)


def test_exactly_one_better_per_episode_is_better_around_one() -> None:
    b = _ref()
    a = b + 1.0 + np.random.default_rng(1).normal(0, 0.05, b.size)
    p = stats.paired(a, b, direction="higher", reference="ref", metric="m")
    assert p.verdict == "better"
    lo, hi = p.ci95
    assert lo < p.mean_diff < hi
    assert lo > 0.9 and hi < 1.1
    assert (p.wins, p.ties, p.losses) == (20, 0, 0)
    # the same numbers on a lower-is-better metric are a loss
    assert stats.paired(a, b, direction="lower").verdict == "worse"


def test_identical_policies_have_a_zero_width_interval() -> None:
    b = _ref()
    p = stats.paired(b.copy(), b, direction="higher")
    assert p.ci95 == (0.0, 0.0)
    assert p.verdict == "no significant difference"
    assert (p.wins, p.ties, p.losses) == (0, 20, 0)


def test_noise_without_effect_is_no_significant_difference() -> None:
    b = _ref(12)
    a = b + np.random.default_rng(3).normal(0, 1.0, b.size) * np.array([1, -1] * 6)
    p = stats.paired(a, b, direction="lower")
    assert p.ci95[0] < 0 < p.ci95[1]
    assert p.verdict == "no significant difference"


def test_interval_is_seeded_and_reproducible() -> None:
    b = _ref()
    a = b + np.random.default_rng(5).normal(0.3, 1.0, b.size)
    assert stats.paired(a, b, direction="higher", seed=7) == stats.paired(
        a, b, direction="higher", seed=7
    )


def test_one_episode_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 2 episodes"):
        stats.paired([1.0], [0.0], direction="higher")


def test_seeds_aggregate_with_iqm_and_stratified_bootstrap() -> None:
    b = _ref(10)
    rng = np.random.default_rng(2)
    seeds = b[None, :] + 2.0 + rng.normal(0, 0.3, (8, 10))
    seeds[0] -= 50.0  # one broken seed: the IQM ignores it, a mean would not
    p = stats.paired_seeds(seeds, b, direction="higher", reference="ref", metric="m")
    assert p.method == "iqm stratified bootstrap"
    assert p.n == 80
    assert 1.7 < p.mean_diff < 2.3
    assert p.verdict == "better"
    assert (p.wins, p.losses) == (70, 10)


def test_headline_is_generated_from_the_verdict() -> None:
    b = _ref()
    same = stats.paired(b + 0.0, b, direction="higher", reference="k8s", metric="reward")
    assert "no significant difference from k8s" in stats.headline("learned", same)
    up = stats.paired(b + 1.0, b, direction="higher", reference="k8s", metric="reward")
    assert "significantly better than k8s" in stats.headline("learned", up)
