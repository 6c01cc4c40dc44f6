"""The one interface of an experience store and of a model registry, whichever backend:
SQLite file / registry folder (:mod:`rlsched.serve.store`, :mod:`rlsched.serve.registry`,
one process) or PostgreSQL (:mod:`rlsched.serve.pg_store`, :mod:`rlsched.serve.pg_registry`,
shared by replicas). The service, the learner and the CLI use only these methods;
:func:`open_backend` picks the backend from ``--store``."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from rlsched.serve.bundle import PolicyBundle
from rlsched.serve.pg import Database, is_pg_url
from rlsched.serve.pg_registry import PgRegistry
from rlsched.serve.pg_store import PgExperienceStore
from rlsched.serve.registry import ModelRegistry
from rlsched.serve.store import Appended, Arrays, ExperienceStore


@runtime_checkable
class ExperienceStoreAPI(Protocol):
    """Durable experiences: ``append_batch`` commits before returning (with an optional
    idempotency key in the same transaction), counters without scans, consumption
    (``consumption()`` is one learner run's view: ``unconsumed`` / ``mark_consumed`` on it),
    retention, and :class:`~rlsched.serve.store.StoreUnavailable` for every backend failure."""

    @property
    def state_dim(self) -> int | None: ...

    def append(self, states: Any, actions: Any, rewards: Any, dones: Any,
               model_version: int | None = None) -> int: ...  # fmt: skip

    def append_batch(self, states: Any, actions: Any, rewards: Any, dones: Any,
                     model_version: int | None = None,
                     idempotency_key: str | None = None) -> Appended: ...  # fmt: skip

    def count(self, consumed: bool | None = None) -> int: ...

    def batches(self) -> int: ...

    def unconsumed(self, limit: int = 100_000) -> Arrays: ...

    def mark_consumed(self, row_ids: np.ndarray) -> None: ...

    def consumption(self, learner: str | None = None) -> contextlib.AbstractContextManager[Any]: ...

    def prune(self, older_than_s: float) -> int: ...

    def close(self) -> None: ...


@runtime_checkable
class RegistryAPI(Protocol):
    """Versions with their bundles, the current one, activation history; compare-and-set
    publish (:class:`~rlsched.serve.registry.StaleVersion`)."""

    def publish(self, bundle: PolicyBundle, metrics: dict[str, Any] | None = None,
                note: str = "", activate: bool = False, *, parent: int | None = ...,
                expect_current: int | None = ..., pin: bool = False) -> int: ...  # fmt: skip

    def activate(self, version: int) -> None: ...

    def rollback(self) -> int: ...

    def prune(self, keep: int) -> list[int]: ...

    def versions(self) -> list[int]: ...

    def current_version(self) -> int | None: ...

    def history(self) -> list[int]: ...

    def pinned(self) -> list[int]: ...

    def info(self, version: int) -> dict[str, Any]: ...

    def load(self, version: int | None = None) -> PolicyBundle: ...

    def list(self) -> list[dict[str, Any]]: ...


def open_backend(store: str | Path, registry: Path | None = None) -> tuple[Any, Any]:
    """``(store, registry)`` for ``--store``: a ``postgresql://`` URL opens both on the
    database; a path opens the SQLite store there and the folder registry ``registry``."""
    if is_pg_url(store):
        db = Database(str(store))
        return PgExperienceStore(db), PgRegistry(db)
    return ExperienceStore(store), (ModelRegistry(registry) if registry is not None else None)
