"""Shared fixtures: paths to the bundled test data."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

DATA = Path(__file__).parent / "data"


@pytest.fixture
def data_dir() -> Path:
    """tests/data."""
    return DATA


# Property tests are derandomised so that every CI run checks the same examples.
settings.register_profile("deterministic", derandomize=True, deadline=None, print_blob=True)
settings.load_profile("deterministic")
