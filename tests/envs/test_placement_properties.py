"""Property tests (hypothesis) of ServerlessPlacement-v0's bookkeeping under masked play.

Random workloads and random valid actions must keep: resources never negative, no node over
capacity, every instance placed once and released once, and committed cost never decreasing.
"""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from rlsched.envs.serverless_placement import ServerlessPlacementEnv

instance = st.fixed_dictionaries(
    {
        "cpu_request": st.floats(0.1, 8.0),
        "mem_request": st.floats(0.1, 16.0),
        "io_network": st.floats(0.0, 500.0),
        "io_disk": st.floats(0.0, 500.0),
        "requests": st.integers(1, 50),
        "exec_time": st.floats(0.01, 300.0),
        "type": st.integers(0, 7),
        "arrival_time": st.floats(0.0, 600.0),
    }
)


@given(
    workload=st.lists(instance, min_size=1, max_size=60),
    nodes=st.integers(1, 12),
    seed=st.integers(0, 10_000),
)
def test_bookkeeping_invariants_under_masked_random_play(workload, nodes, seed) -> None:
    env = ServerlessPlacementEnv(
        num_nodes=nodes,
        dataset=workload,
        episode_length=len(workload),
        on_exhausted="end",
        cluster_seed=seed % 7,
    )
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    cap = env.cluster.capacity
    cost = env.billing.committed_cost()
    node_cost = env.billing.closed.copy()
    done = env._done
    while not done:
        mask = env.action_masks()
        assert mask.any()
        obs, _, done, _, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        assert not info.get("invalid_action")
        c = env.cluster
        assert np.all(c.requested >= 0) and np.all(c.usage >= 0)
        assert np.all(c.requested <= cap[:, :2] + 1e-6)
        assert np.all(obs["node_deployed"] >= 0)
        new_cost = env.billing.committed_cost()
        assert new_cost >= cost - 1e-12
        assert np.all(env.billing.closed >= node_cost - 1e-12)
        cost, node_cost = new_cost, env.billing.closed.copy()
    placed = np.array(env._node_of) >= 0
    # instances larger than every node are counted as unplaceable, the rest placed exactly once
    assert placed.sum() + env._unplaceable == len(workload)
    env.drain()
    np.testing.assert_array_equal(env._released, placed)
    np.testing.assert_allclose(env.cluster.requested, 0.0, atol=1e-9)
    np.testing.assert_allclose(env.cluster.usage, 0.0, atol=1e-9)
    assert np.all(env._in_flight == 0)
    assert env.billing.committed_cost() == cost


@given(seed=st.integers(0, 10_000))
def test_reset_is_deterministic_on_real_data(seed) -> None:
    a = ServerlessPlacementEnv(dataset="wfinstances:all")
    b = ServerlessPlacementEnv(dataset="wfinstances:all")
    oa, _ = a.reset(seed=seed)
    ob, _ = b.reset(seed=seed)
    for k in oa:
        np.testing.assert_array_equal(oa[k], ob[k])
    np.testing.assert_array_equal(a._arrival, b._arrival)
