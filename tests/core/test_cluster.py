import numpy as np
import pytest

from rlsched.core.cluster import Billing, Cluster


def small() -> Cluster:
    return Cluster(np.array([[4, 8, 100, 100], [2, 4, 100, 100]], float), np.array([0.36, 0.72]))


def test_fits_place_release_round_trip() -> None:
    c = small()
    np.testing.assert_array_equal(c.fits(3.0, 4.0), [True, False])
    c.place(0, 3.0, 4.0, (2.5, 4.0, 10.0, 0.0))
    np.testing.assert_array_equal(c.fits(1.0, 4.0), [True, True])
    np.testing.assert_array_equal(c.fits(1.5, 1.0), [False, True])
    np.testing.assert_allclose(c.utilization()[0], [2.5 / 4, 0.5, 0.1, 0.0])
    c.release(0, 3.0, 4.0, (2.5, 4.0, 10.0, 0.0))
    assert np.all(c.requested == 0) and np.all(c.usage == 0)
    np.testing.assert_array_equal(c.free(), c.capacity[:, :2])


def test_inactive_nodes_never_fit() -> None:
    c = small()
    c.set_active(1, False)
    np.testing.assert_array_equal(c.fits(0.5, 0.5), [True, False])
    c.set_active(1, True)
    assert c.fits(0.5, 0.5).all()


def test_bad_capacity_is_refused() -> None:
    with pytest.raises(ValueError):
        Cluster(np.zeros((2, 4)), np.ones(2))
    with pytest.raises(ValueError):
        Cluster(np.ones((2, 3)), np.ones(2))


def test_billing_periods_and_keepalive() -> None:
    b = Billing(np.array([3600.0]), keepalive=10.0)  # $1 per second
    assert b.extend(0, now=0.0, busy_until=5.0) == pytest.approx(15.0)  # 0..15
    assert b.extend(0, now=2.0, busy_until=3.0) == 0.0  # inside the period
    assert b.extend(0, now=4.0, busy_until=20.0) == pytest.approx(15.0)  # 15..30
    assert b.committed_cost() == pytest.approx(30.0)
    assert b.billed(29.0)[0] and not b.billed(31.0)[0]
    # idle gap: a new period starts at 100
    assert b.extend(0, now=100.0, busy_until=101.0) == pytest.approx(11.0)
    assert b.committed_cost() == pytest.approx(41.0)
    assert b.remaining(105.0)[0] == pytest.approx(6.0)


def test_sampled_cluster_is_seeded() -> None:
    a = Cluster.sample(20, np.random.default_rng(1))
    b = Cluster.sample(20, np.random.default_rng(1))
    np.testing.assert_array_equal(a.capacity, b.capacity)
    np.testing.assert_array_equal(a.price, b.price)
    assert len(set(a.names)) == 20
