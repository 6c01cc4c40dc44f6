"""Fixtures for the LLM serving simulator tests."""

from __future__ import annotations

import pytest

from rlsched.data.registry import clear_cache


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Tests that write trace files must not see datasets cached by earlier tests."""
    clear_cache()
    yield
    clear_cache()
