"""The machine and package versions a benchmark ran on, recorded next to its numbers."""

from __future__ import annotations

import os
import platform
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any


def version(dist: str) -> str | None:
    """An installed distribution's version, or None when it is not installed."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def machine_info(*dists: str) -> dict[str, Any]:
    """Date, CPU, cores, memory, Python, platform, the load average now, and the versions of
    ``dists`` (keys with ``-`` as ``_``: ``llama-cpp-python`` -> ``llama_cpp_python``)."""
    return {
        "date_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        "cpu_model": _proc_field("/proc/cpuinfo", "model name")
        or platform.processor()
        or "unknown",
        "logical_cores": os.cpu_count(),
        "usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "memory_gb": _memory_gb(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        **{dist.replace("-", "_"): version(dist) for dist in dists},
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def _proc_field(path: str, name: str) -> str | None:
    try:
        lines = Path(path).read_text().splitlines()
    except OSError:
        return None
    return next((ln.split(":", 1)[1].strip() for ln in lines if ln.startswith(name)), None)


def _memory_gb() -> float | None:
    total = _proc_field("/proc/meminfo", "MemTotal")
    return None if total is None else round(int(total.split()[0]) / 1024**2, 1)
