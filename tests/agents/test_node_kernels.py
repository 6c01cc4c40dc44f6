"""The node-scoring actor's compiled layers give numpy's logits, or are not used."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import numpy as np
import pytest

pytest.importorskip("numba")

from rlsched.agents import node_numpy
from rlsched.evaluate import make_env
from rlsched.optional import loaded, numpy_path
from rlsched.policies.learned import LearnedPolicy
from rlsched.policies.registry import make_policy
from rlsched.policies.trial import TrialGuard
from rlsched.splits import SPLITS
from rlsched.zoo import card

#: the zoo's node-scoring entries and node counts they run at (a prior or none, a trial guard
#: or none; PodRebalancing's scores a handful of moves, the others every valid node)
ENTRIES = [
    ("pod-rebalancing-anchored-ppo", 4),
    ("pod-rebalancing-anchored-ppo", 10),
    ("serverless-edge-maskable-ppo", 20),
    ("vm-recovering-5-ppo", 5),
]


def _numpy(fn: Any, *args: Any) -> Any:
    with numpy_path(node_numpy):
        return fn(*args)


def _scorer(name: str, nodes: int) -> tuple[Any, LearnedPolicy]:
    c = card(name)
    kw = dict(c.get("env_kwargs") or {})
    if c.get("preset"):
        kw.setdefault("scenario", c["preset"])
    env = make_env(c["env"], c.get("test", {}).get("dataset") or SPLITS[c["env"]].test,
                   num_nodes=nodes, **kw)  # fmt: skip
    pol = make_policy(f"learned:zoo/{name}", env, seed=0)
    if isinstance(pol, TrialGuard):
        pol = pol.policy
    assert isinstance(pol, LearnedPolicy) and pol._scorer is not None
    return env, pol


def test_compiled_layers_equal_numpys_at_every_row_count_the_probe_accepts() -> None:
    env, pol = _scorer("serverless-edge-maskable-ppo", 100)
    scorer = pol._scorer
    assert scorer is not None
    obs, _ = env.reset(seed=1)
    rng = np.random.default_rng(0)
    for rows in [*range(1, 18), 40, 99, 100]:
        pick = rng.choice(100, rows, replace=False)
        got = scorer.logits(obs, pick)
        want = _numpy(scorer.logits, obs, pick)
        assert got.dtype == want.dtype == np.float32
        np.testing.assert_array_equal(got, want)
    # the probe accepts some counts (else this test would check nothing); on this machine all
    # but one row, whose last product numpy sums as an inner product
    assert any(scorer._exact.values())


def test_a_row_count_whose_probe_differs_is_scored_by_numpy(monkeypatch: Any) -> None:
    env, pol = _scorer("serverless-edge-maskable-ppo", 20)
    scorer = pol._scorer
    assert scorer is not None
    obs, _ = env.reset(seed=2)
    scorer.logits(obs, np.arange(3))  # loads the kernels
    kernels = loaded(node_numpy.KERNELS)
    head = kernels.head

    def off(*args: Any) -> np.ndarray:  # a BLAS that rounds the last bit otherwise
        return np.nextafter(head(*args), np.float32(np.inf))

    monkeypatch.setattr(kernels, "head", off)
    got = scorer.logits(obs, np.arange(5))
    assert scorer._exact[5] is False and scorer._exact[3] is True
    np.testing.assert_array_equal(got, _numpy(scorer.logits, obs, np.arange(5)))


def test_a_scorer_that_used_the_compiled_layers_still_copies_and_pickles() -> None:
    env, pol = _scorer("serverless-edge-maskable-ppo", 20)
    scorer = pol._scorer
    assert scorer is not None
    obs, _ = env.reset(seed=3)
    want = scorer.logits(obs, np.arange(4))
    for other in (copy.deepcopy(scorer), pickle.loads(pickle.dumps(scorer))):
        np.testing.assert_array_equal(other.logits(obs, np.arange(4)), want)
    copy.deepcopy(pol)


@pytest.mark.parametrize(("name", "nodes"), ENTRIES)
def test_the_zoos_node_scorers_act_as_on_the_numpy_path(name: str, nodes: int) -> None:
    env, pol = _scorer(name, nodes)
    rng = np.random.default_rng(nodes)
    obs, _ = env.reset(seed=7)
    for _ in range(150):
        mask = env.unwrapped.action_masks()
        assert pol.act(obs, mask) == _numpy(pol.act, obs, mask)
        # random actions: states the policy would not visit
        obs, _, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if term or trunc:
            obs, _ = env.reset(seed=int(rng.integers(1000)))
