"""What the job tests share: one local Ray cluster for the whole session (starting one takes
seconds; every Ray test uses the same two CPUs)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def cluster() -> Iterator[None]:
    """A local 2-CPU Ray cluster, as ``--executor ray`` would start (Ray joins it)."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()
