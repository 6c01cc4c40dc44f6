"""The experience-store contract, run once per backend (SQLite file, PostgreSQL database):
the same tests, the same answers."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from rlsched.serve.store import ExperienceStore, IdempotencyConflict

Opener = Callable[[], Any]


def _batch(n: int, dim: int = 6, seed: int = 0) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    return (
        rng.random((n, dim), dtype=np.float32),
        rng.integers(0, dim, n),
        rng.normal(size=n),
        rng.random(n) < 0.2,
    )


@pytest.fixture(params=["sqlite", "postgresql"])
def open_store(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Opener]:
    """``open_store()`` opens (or re-opens) one store of the backend; all are closed after."""
    opened: list[Any] = []
    if request.param == "sqlite":
        path = tmp_path / "x.sqlite"

        def opener() -> Any:
            st = ExperienceStore(path)
            opened.append(st)
            return st
    else:
        url = request.getfixturevalue("pg_url")
        from rlsched.serve.pg import Database
        from rlsched.serve.pg_store import PgExperienceStore

        def opener() -> Any:
            st = PgExperienceStore(Database(url))
            opened.append(st)
            return st

    yield opener
    for st in opened:
        st.close()


def test_append_unconsumed_mark_consumed(open_store: Opener) -> None:
    st = open_store()
    assert st.count() == 0 and st.state_dim is None
    ids, s, *_ = st.unconsumed()
    assert len(ids) == 0 and s.shape[0] == 0
    b1, b2 = _batch(5, seed=1), _batch(3, seed=2)
    id1 = st.append(*b1, model_version=1)
    id2 = st.append(*b2)
    assert id2 > id1 and st.state_dim == 6 and st.batches() == 2
    assert st.count() == 8 and st.count(consumed=False) == 8 and st.count(consumed=True) == 0
    ids, s, a, r, d, bids = st.unconsumed()
    assert len(ids) == 8 and np.all(np.diff(ids) > 0)  # insertion order
    assert np.array_equal(s, np.concatenate([b1[0], b2[0]])) and s.dtype == np.float32
    assert np.array_equal(a, np.concatenate([b1[1], b2[1]])) and a.dtype == np.int64
    assert np.array_equal(r, np.concatenate([b1[2], b2[2]]))
    assert np.array_equal(d, np.concatenate([b1[3], b2[3]])) and d.dtype == bool
    assert bids.tolist() == [id1] * 5 + [id2] * 3
    assert len(st.unconsumed(limit=6)[0]) == 6
    st.mark_consumed(ids[[0, 2, 5]])  # partial, across the batch boundary
    assert st.count(consumed=True) == 3 and st.count(consumed=False) == 5
    rest = st.unconsumed()
    assert rest[0].tolist() == ids[[1, 3, 4, 6, 7]].tolist()
    assert np.array_equal(rest[1], s[[1, 3, 4, 6, 7]])
    st.mark_consumed(rest[0])
    st.mark_consumed(np.array([10**12]))  # unknown ids are ignored
    assert st.count(consumed=False) == 0 and len(st.unconsumed()[0]) == 0
    st.close()
    st2 = open_store()  # durable: everything still there
    assert st2.count() == 8 and st2.count(consumed=True) == 8 and st2.state_dim == 6


def test_single_state_and_nan_reward_kept(open_store: Opener) -> None:
    st = open_store()
    st.append(np.ones(4), np.array([1]), np.array([np.nan]), np.array([True]))
    _, s, a, r, d, _ = st.unconsumed()
    assert s.shape == (1, 4) and a.tolist() == [1] and np.isnan(r[0]) and d.tolist() == [True]


def test_refusals(open_store: Opener) -> None:
    st = open_store()
    st.append(*_batch(4, dim=6))
    with pytest.raises(ValueError, match="6-feature"):
        st.append(*_batch(4, dim=8))
    s, a, r, d = _batch(4)
    with pytest.raises(ValueError, match="lengths differ"):
        st.append(s, a[:3], r, d)
    with pytest.raises(ValueError, match="empty"):
        st.append(s[:0], a[:0], r[:0], d[:0])
    with pytest.raises(ValueError, match=">= 0"):
        st.append(s, -a - 1, r, d)
    with pytest.raises(ValueError, match="integers"):
        st.append(s, a + 0.5, r, d)
    assert st.count() == 4  # nothing of the refused batches was stored


def test_threads_append_concurrently(open_store: Opener) -> None:
    st = open_store()
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for j in range(10):
                st.append(*_batch(7, seed=100 * k + j))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert st.count() == 280 and st.batches() == 40
    ids = st.unconsumed()[0]
    assert len(np.unique(ids)) == 280


def test_idempotency_key(open_store: Opener) -> None:
    st = open_store()
    b = _batch(5, seed=3)
    first = st.append_batch(*b, model_version=2, idempotency_key="k-1")
    again = st.append_batch(*b, model_version=9, idempotency_key="k-1")
    assert not first.repeated and again.repeated
    assert (again.batch_id, again.n, again.model_version) == (first.batch_id, 5, 2)
    assert st.count() == 5 and st.batches() == 1
    with pytest.raises(IdempotencyConflict):
        st.append_batch(*_batch(5, seed=4), idempotency_key="k-1")
    assert st.count() == 5


def test_counters_and_prune(open_store: Opener) -> None:
    st = open_store()
    for j in range(3):
        st.append_batch(*_batch(4, seed=j), idempotency_key=f"p{j}")
    ids = st.unconsumed()[0]
    st.mark_consumed(ids[:8])  # the first two batches
    assert st.prune(3600.0) == 0  # too young
    assert st.prune(0.0) == 8
    assert st.count() == 4 and st.count(consumed=False) == 4 and st.batches() == 1
    assert st.unconsumed()[0].tolist() == ids[8:].tolist()
    nid = st.append(*_batch(2, seed=9))  # ids are not reused after a prune
    assert nid > max(int(i) for i in st.unconsumed()[5][:-2])
    # the idempotency keys went with the prune: the key stores a new batch
    assert not st.append_batch(*_batch(4, seed=0), idempotency_key="p0").repeated


def test_two_consumers_get_each_experience_exactly_once(open_store: Opener) -> None:
    st = open_store()
    for j in range(20):
        st.append(*_batch(10, seed=j))
    got: list[list[int]] = [[], []]
    barrier = threading.Barrier(2)

    def consume(k: int) -> None:
        barrier.wait()
        for _ in range(100):  # until nothing is left (a round may find every batch claimed)
            if st.count(consumed=False) == 0:
                return
            with st.consumption(f"c{k}") as view:
                ids = view.unconsumed(30)[0]
                view.mark_consumed(ids)
                got[k].extend(int(i) for i in ids)

    threads = [threading.Thread(target=consume, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not set(got[0]) & set(got[1])  # no experience went to both
    assert len(got[0]) + len(got[1]) == 200 == len(set(got[0]) | set(got[1]))
    assert st.count(consumed=True) == 200 and st.count(consumed=False) == 0


def test_both_backends_implement_the_one_interface(open_store: Opener, tmp_path: Any) -> None:
    from rlsched.serve.registry import ModelRegistry
    from rlsched.serve.store_api import ExperienceStoreAPI, RegistryAPI

    assert isinstance(open_store(), ExperienceStoreAPI)
    assert isinstance(ModelRegistry(tmp_path / "reg"), RegistryAPI)


def test_the_same_key_from_two_writers_at_once_is_stored_once(open_store: Opener) -> None:
    """A client retrying on another replica while its first call is still in flight: both
    calls are answered with the one batch."""
    st = open_store()
    b = _batch(8, seed=5)
    answers: list[Any] = []
    errors: list[BaseException] = []

    def write(k: int) -> None:
        try:
            for j in range(15):
                answers.append(st.append_batch(*b, idempotency_key=f"same-{j}"))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=write, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert len(answers) == 45 and st.batches() == 15 and st.count() == 120
    assert sum(not a.repeated for a in answers) == 15
