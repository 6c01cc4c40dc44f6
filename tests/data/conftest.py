"""Fixtures for the data-layer tests: shipped file paths and helpers to write broken copies."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlsched.data._util import shipped
from rlsched.data.registry import clear_cache

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Tests that edit files on disk must not see datasets cached by earlier tests."""
    clear_cache()
    yield
    clear_cache()


@pytest.fixture
def v2018_sample() -> Path:
    return FIXTURES / "batch_task_sample.csv"


@pytest.fixture
def shipped_file():
    return shipped
