"""OnlineLearner: PPO on stored experiences, gating, refusals, background thread; kube_gate."""

from __future__ import annotations

import time

import numpy as np
import pytest

from rlsched.serve.bundle import PolicyBundle
from rlsched.serve.learner import GateResult, OnlineLearner, UpdateReport, gae, kube_gate
from rlsched.serve.registry import ModelRegistry
from rlsched.serve.store import ExperienceStore

S, A = 6, 4


@pytest.fixture
def setup(tmp_path):
    reg = ModelRegistry(tmp_path / "reg")
    reg.publish(PolicyBundle.fresh(S, A, hidden=(16, 16), seed=0), activate=True)
    st = ExperienceStore(tmp_path / "exp.sqlite")
    yield reg, st
    st.close()


def _experiences(n: int, seed: int) -> tuple[np.ndarray, ...]:
    """Uniformly random actions; reward 1 for action 0, else 0; episodes of 8 steps."""
    rng = np.random.default_rng(seed)
    states = rng.random((n, S), dtype=np.float32)
    actions = rng.integers(0, A, n)
    rewards = (actions == 0).astype(np.float64)
    dones = (np.arange(n) % 8) == 7
    return states, actions, rewards, dones


def _p0(b: PolicyBundle) -> float:
    x = np.random.default_rng(99).random((256, S), dtype=np.float32)
    return float(b.probs(x)[:, 0].mean())


def test_gae_matches_hand_computation():
    r = np.array([1.0, 0.0, 2.0])
    v = np.array([0.5, 0.2, 0.1])
    d = np.array([False, True, False])
    adv, ret = gae(r, v, d, gamma=0.9, lam=0.8)
    # t=2: last step, bootstrap 0: 2 - 0.1
    assert adv[2] == pytest.approx(1.9)
    # t=1: done -> no bootstrap, no carry: 0 - 0.2
    assert adv[1] == pytest.approx(-0.2)
    # t=0: 1 + 0.9 * 0.2 - 0.5 + 0.9 * 0.8 * (-0.2)
    assert adv[0] == pytest.approx(1 + 0.18 - 0.5 - 0.144)
    np.testing.assert_allclose(ret, adv + v)


def test_learns_a_clear_signal_and_publishes(setup):
    reg, st = setup
    published: list[int] = []
    lr = OnlineLearner(
        reg, st, gate=lambda c, cur: GateResult(True, "permissive"), min_experiences=256,
        epochs=4, minibatch=64, lr=3e-3, on_publish=published.append,
    )  # fmt: skip
    before = _p0(reg.load())
    assert lr.run_once().status == "skipped"  # nothing stored yet
    for k in range(3):
        st.append(*_experiences(512, seed=k))
        rep = lr.run_once()
        assert isinstance(rep, UpdateReport)
        assert rep.status == "published", rep.reason
        assert rep.experiences == 512 and rep.version == reg.current_version() == k + 2
        assert all(np.isfinite(v) for v in rep.losses.values())
        assert {"policy_loss", "value_loss", "entropy", "approx_kl"} <= set(rep.losses)
        assert st.count(consumed=False) == 0
    after = _p0(reg.load())
    assert after > before + 0.15, (before, after)
    assert published == [2, 3, 4]
    rows = reg.list()
    assert [r["parent"] for r in rows] == [None, 1, 2, 3]
    assert rows[-1]["metrics"]["gate"]["reason"] == "permissive"
    assert reg.load().meta["parent_version"] == 3
    s = lr.status()
    assert s["published"] == 3 and s["skipped"] == 1 and s["running"] is False
    assert s["last_report"]["status"] == "published"


def test_failed_gate_keeps_current_version(setup):
    reg, st = setup
    calls = []

    def gate(cand: PolicyBundle, cur: PolicyBundle) -> GateResult:
        calls.append((cand, cur))
        return GateResult(False, "candidate scored 1.0 < current 2.0", 1.0, 2.0)

    lr = OnlineLearner(reg, st, gate=gate, min_experiences=100)
    st.append(*_experiences(200, seed=0))
    rep = lr.run_once()
    assert rep.status == "rejected" and rep.version is None
    assert "candidate scored 1.0 < current 2.0" in rep.reason and "keeping v1" in rep.reason
    assert rep.gate == {"passed": False, "reason": "candidate scored 1.0 < current 2.0",
                        "candidate": 1.0, "current": 2.0}  # fmt: skip
    assert reg.current_version() == 1 and len(reg.list()) == 1
    assert st.count(consumed=False) == 0  # consumed either way
    cand, cur = calls[0]
    assert cur.state_dim == cand.state_dim == S
    assert not np.allclose(cand.logits(np.ones(S)), cur.logits(np.ones(S)))  # it did train

    def broken(cand: PolicyBundle, cur: PolicyBundle) -> GateResult:
        raise RuntimeError("eval env missing")

    lr.gate = broken
    st.append(*_experiences(200, seed=1))
    rep = lr.run_once()
    assert rep.status == "rejected" and "gate failed: RuntimeError: eval env missing" in rep.reason
    assert reg.current_version() == 1


def test_nan_reward_drops_only_that_experience(setup):
    reg, st = setup
    lr = OnlineLearner(reg, st, min_experiences=100)
    s, a, r, d = _experiences(200, seed=0)
    r[17] = np.nan
    st.append(s, a, r, d)
    rep = lr.run_once()
    assert rep.status == "published" and "dropped 1 invalid" in rep.reason, rep.reason
    assert rep.experiences == 199
    assert reg.current_version() == 2 and st.count(consumed=False) == 0


def test_poisoned_reward_does_not_cost_the_window(setup):
    """Issue #14 item 4: one reward of 1e20 (in a store written before /update refused it)
    used to overflow float32 and discard all 301 experiences without a version."""
    reg, st = setup
    lr = OnlineLearner(reg, st, min_experiences=256)
    s, a, r, d = _experiences(301, seed=0)
    r[150] = 1e20
    st.append(s, a, r, d)
    rep = lr.run_once()
    assert rep.status == "published", rep.reason
    assert rep.experiences == 300 and rep.version == 2
    assert np.isfinite(list(rep.losses.values())).all()
    assert st.count(consumed=False) == 0 and st.count(consumed=True) == 301


def test_all_invalid_window_is_rejected(setup):
    reg, st = setup
    lr = OnlineLearner(reg, st, min_experiences=100)
    s, a, r, d = _experiences(200, seed=0)
    r[:] = 1e300  # finite float64, but the float32 returns would overflow to inf
    st.append(s, a, r, d)
    rep = lr.run_once()
    assert rep.status == "rejected" and "all 200 experiences are invalid" in rep.reason
    assert reg.current_version() == 1 and st.count(consumed=False) == 0


def test_action_outside_the_model_is_dropped(setup):
    reg, st = setup
    lr = OnlineLearner(reg, st, min_experiences=10)
    s, a, r, d = _experiences(20, seed=0)
    a[3] = A + 5
    st.append(s, a, r, d)
    rep = lr.run_once()
    assert rep.status == "published" and rep.experiences == 19, rep.reason


def test_operator_rollback_while_training_wins(setup):
    """Issue #14 item 3: the learner trained from v1; an operator activates v2 meanwhile
    (here: while the gate runs). The update is discarded (compare-and-set), v2 stays, the
    experiences stay for the next run, which publishes with parent v2."""
    reg, st = setup
    reg.publish(PolicyBundle.fresh(S, A, hidden=(16, 16), seed=1))  # v2, not active
    calls = []

    def operator_acts(candidate, current):
        if not calls:
            reg.activate(2)
        calls.append(1)
        return GateResult(True, "permissive")

    lr = OnlineLearner(reg, st, gate=operator_acts, min_experiences=64, minibatch=64, epochs=1)
    st.append(*_experiences(128, seed=0))
    rep = lr.run_once()
    assert rep.status == "discarded" and "no longer current (now v2)" in rep.reason
    assert reg.current_version() == 2 and reg.versions() == [1, 2]
    assert st.count(consumed=False) == 128
    rep = lr.run_once()
    assert rep.status == "published" and rep.from_version == 2
    assert reg.info(rep.version)["parent"] == 2 and reg.current_version() == rep.version


def test_learner_prunes_the_registry(setup):
    reg, st = setup  # v1 published by the fixture, activated (pinned) below
    reg.activate(1)
    lr = OnlineLearner(reg, st, min_experiences=32, minibatch=32, epochs=1, keep_versions=2)
    for k in range(5):
        st.append(*_experiences(32, seed=k))
        assert lr.run_once().status == "published"
    # v2..v6 published by the learner; kept: the last 2 (v5, v6) and the pinned v1
    assert reg.versions() == [1, 5, 6] and reg.current_version() == 6


def test_no_active_version_skips(tmp_path):
    reg = ModelRegistry(tmp_path / "reg")
    with ExperienceStore(tmp_path / "e.sqlite") as st:
        st.append(*_experiences(20, seed=0))
        rep = OnlineLearner(reg, st, min_experiences=10).run_once()
        assert rep.status == "skipped" and "no active version" in rep.reason
        assert st.count(consumed=False) == 20


def test_background_thread_publishes_and_survives_errors(setup):
    reg, st = setup
    lr = OnlineLearner(reg, st, min_experiences=64, minibatch=64, epochs=1)
    lr.start(interval=0.05)
    try:
        st.append(*_experiences(128, seed=0))
        lr.nudge()
        deadline = time.monotonic() + 20
        while lr.status()["published"] < 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert lr.status()["published"] == 1 and reg.current_version() == 2
        # an exception inside run_once is recorded, the thread keeps going
        real = lr.store.count
        lr.store.count = lambda consumed=None: (_ for _ in ()).throw(OSError("disk gone"))
        deadline = time.monotonic() + 20
        while lr.status()["errors"] < 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        lr.store.count = real
        s = lr.status()
        assert s["errors"] >= 1 and "disk gone" in s["last_error"] and s["running"]
    finally:
        lr.stop()
    assert lr.status()["running"] is False


def test_kube_gate_on_fresh_bundles():
    try:
        import gymnasium as gym

        import rlsched  # noqa: F401

        gym.spec("rlsched/KubeScheduling-v0")
    except Exception as e:  # pragma: no cover - depends on the env being present
        pytest.skip(f"rlsched/KubeScheduling-v0 is not registered: {e}")
    gate = kube_gate(episodes=2, seed=7)
    cur = PolicyBundle.fresh(8, 8, seed=0)  # N = 3 nodes
    same = gate(cur, cur)
    assert same.passed and same.candidate == same.current
    assert same.current is not None and np.isfinite(same.current)
    other = gate(PolicyBundle.fresh(8, 8, seed=1), cur)
    assert other.passed == (other.candidate >= other.current)
    assert "KubeScheduling-v0" in other.reason
    strict = kube_gate(episodes=2, seed=7, tolerance=-1e9)(cur, cur)  # demands a huge gain
    assert not strict.passed
    with pytest.raises(ValueError, match="2N"):
        gate(PolicyBundle.fresh(7, 8), PolicyBundle.fresh(7, 8))
