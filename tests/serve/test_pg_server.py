"""``rlsched serve --store postgresql://...``: model resolution on the shared registry and the
refusals of flags that belong to the single-process mode."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from rlsched.errors import ConfigError
from rlsched.serve.bundle import PolicyBundle
from rlsched.serve.server import ServeConfig, build_service


def test_replicas_starting_together_publish_one_fresh_policy(pg_url: str) -> None:
    services: list[Any] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(3)

    def start() -> None:
        try:
            barrier.wait()
            services.append(build_service(ServeConfig(store=pg_url, state_dim=10, action_dim=10)))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=start) for _ in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    try:
        assert not errors, errors
        assert {s.model_version for s in services} == {1}
        assert services[0].registry.versions() == [1]
        assert len(services[0].companions) == 1  # the registry watcher
    finally:
        for s in services:
            s.close()


def test_model_resolution_and_refusals(pg_url: str, tmp_path: Path) -> None:
    b = PolicyBundle.fresh(10, 10, seed=7)
    b.save(tmp_path / "bundle")
    svc = build_service(ServeConfig(store=pg_url, model=str(tmp_path / "bundle")))
    try:
        assert svc.model_version == 1 and svc.registry.info(1)["note"].startswith("source ")
    finally:
        svc.close()
    again = build_service(ServeConfig(store=pg_url, model=str(tmp_path / "bundle")))
    try:  # the same bundle: not published twice
        assert again.model_version == 1 and again.registry.versions() == [1]
        again.registry.publish(PolicyBundle.fresh(10, 10, seed=8), note="other")
    finally:
        again.close()
    v2 = build_service(ServeConfig(store=pg_url, model="v2"))
    try:
        assert v2.model_version == 2
    finally:
        v2.close()
    with pytest.raises(ConfigError, match="state_dim 10"):
        build_service(ServeConfig(store=pg_url, state_dim=16, action_dim=16))
    with pytest.raises(ConfigError, match="rlsched learn"):
        build_service(ServeConfig(store=pg_url, learn=True))
    with pytest.raises(ConfigError, match="registry is in"):
        build_service(ServeConfig(store=pg_url, registry=tmp_path / "reg"))


def test_empty_registry_without_dimensions_is_one_clear_error(pg_url: str) -> None:
    with pytest.raises(ConfigError, match="no active version"):
        build_service(ServeConfig(store=pg_url))
