"""Log a finished run to an MLflow tracking store: parameters, tags, metrics by step, files.

A :class:`TrackedRun` is what a run says about itself (:mod:`~rag_judge.integrations.logged_runs`
builds one per command); :func:`log_run` writes it through ``mlflow.MlflowClient`` to a
``file:`` folder, a ``sqlite:`` database or a tracking server, and :func:`check_tracking` tries
the store before a run starts, so a wrong address fails in a second, not after an hour-long
sweep. The run's own files are written before it is logged: a store that fails leaves them on
disk, and the error says where the store failed.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from rag_judge.core.errors import InputError, RagJudgeError
from rag_judge.core.redact import redact_url, redact_urls
from rag_judge.integrations.mlflow_import import import_mlflow

SCHEMES = ("file", "sqlite", "http", "https")
"""The tracking URIs ``--mlflow`` takes: a folder, a database file, a server."""
_BATCH = {"metrics": 1000, "params": 100, "tags": 100}
"""MLflow's limits per ``log_batch`` call."""
_KEY = re.compile(r"[^A-Za-z0-9_\-. /]")


class TrackingError(RagJudgeError):
    """The tracking store could not be reached or refused what was logged."""


@dataclass(frozen=True)
class Metric:
    """One value of a metric; ``step`` is k for a sweep's per-k figures (0 otherwise)."""

    key: str
    value: float
    step: int = 0


@dataclass(frozen=True)
class TrackedRun:
    """What one run logs: where, under which name, and its parameters, tags, metrics, files."""

    experiment: str
    """The MLflow experiment (created when missing); ``MLFLOW_EXPERIMENT_NAME`` overrides it."""
    name: str
    """The run's name in the MLflow UI."""
    params: Mapping[str, str] = field(default_factory=dict)
    tags: Mapping[str, str] = field(default_factory=dict)
    metrics: Sequence[Metric] = ()
    artifacts: Sequence[Path] = ()
    """Files logged as the run's artifacts, each under its own name."""


def metric_key(name: str) -> str:
    """``name`` as MLflow accepts a metric or parameter key (``a*b`` becomes ``a_b``)."""
    return _KEY.sub("_", name)


def check_uri(uri: str) -> str:
    """``uri`` when it is a tracking URI ``--mlflow`` takes.

    Raises:
        InputError: another scheme, or a bare path (which would be ambiguous).
    """
    scheme = urlsplit(uri).scheme
    if scheme not in SCHEMES:
        raise InputError(
            f"{redact_url(uri)!r} is no tracking URI: give file:FOLDER, sqlite:///FILE.db or "
            "http(s)://SERVER",
            field="mlflow",
        )
    return uri


def check_tracking(uri: str) -> None:
    """Reach the store before the run: MLflow installed, the address valid and answering.

    Raises:
        InputError: not a tracking URI this takes.
        MlflowMissing: MLflow is not installed (the message names the extra).
        TrackingError: the store did not answer.
    """
    check_uri(uri)
    client = _client(uri)
    try:
        client.search_experiments(max_results=1)
    except Exception as error:  # MLflow, HTTP and database errors alike: said, not hidden
        raise TrackingError(_said(uri, error)) from error


def log_run(uri: str, run: TrackedRun) -> str:
    """Log ``run`` to the tracking store at ``uri`` and return the MLflow run id.

    A run that fails part-way is marked FAILED in the store (when the store still answers).

    Raises:
        MlflowMissing: MLflow is not installed.
        TrackingError: the store could not be reached or refused a value or a file.
    """
    mlflow = import_mlflow()
    client = _client(check_uri(uri))
    try:
        experiment_id = _experiment(client, uri, run.experiment)
        run_id: str = client.create_run(experiment_id, run_name=run.name).info.run_id
    except Exception as error:
        raise TrackingError(_said(uri, error)) from error
    try:
        _log_values(mlflow, client, run_id, run)
        for path in run.artifacts:
            client.log_artifact(run_id, str(path))
    except Exception as error:
        raise TrackingError(_said(uri, error, marked=_failed(client, run_id))) from error
    client.set_terminated(run_id)
    return run_id


def _client(uri: str) -> Any:
    """An ``MlflowClient`` for ``uri``; a ``file:`` store is allowed explicitly (MLflow 3
    refuses the folder store unless told, and the user asked for it by name)."""
    mlflow = import_mlflow()
    if urlsplit(uri).scheme == "file":
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    return mlflow.MlflowClient(tracking_uri=uri)


def _experiment(client: Any, uri: str, name: str) -> str:
    """The experiment's id, created when missing; with a ``sqlite:`` store its artifacts go
    beside the database (``mlartifacts/``), not into the current directory."""
    name = os.environ.get("MLFLOW_EXPERIMENT_NAME") or name
    found = client.get_experiment_by_name(name)
    if found is not None:
        return str(found.experiment_id)
    location = None
    parts = urlsplit(uri)
    if parts.scheme == "sqlite" and parts.path not in ("", "/", "/:memory:"):
        database = Path(unquote(parts.path[1:] if parts.path.startswith("//") else parts.path))
        location = (database.resolve().parent / "mlartifacts").as_uri()
    return str(client.create_experiment(name, artifact_location=location))


def _log_values(mlflow: Any, client: Any, run_id: str, run: TrackedRun) -> None:
    """Parameters, tags and metrics in batches within MLflow's limits."""
    entities = mlflow.entities
    now = int(time.time() * 1000)
    metrics = [entities.Metric(metric_key(m.key), m.value, now, m.step) for m in run.metrics]
    params = [entities.Param(metric_key(k), v) for k, v in run.params.items()]
    tags = [entities.RunTag(k, v) for k, v in run.tags.items()]
    for kind, items in (("params", params), ("tags", tags), ("metrics", metrics)):
        size = _BATCH[kind]
        for start in range(0, len(items), size):
            client.log_batch(run_id, **{kind: items[start : start + size]})


def _failed(client: Any, run_id: str) -> str:
    """Mark the run FAILED; what happened, for the error message (the store that failed may
    refuse this too, and then the message says so)."""
    try:
        client.set_terminated(run_id, "FAILED")
    except Exception as error:
        return f"run {run_id} left unfinished: {type(error).__name__}"
    return f"run {run_id} marked FAILED"


def _said(uri: str, error: BaseException, *, marked: str = "") -> str:
    """The error in one line, credentials in the address hidden."""
    where = f"MLflow at {redact_url(uri)}"
    run = f" ({marked})" if marked else ""
    lines = str(error).strip().splitlines()
    text = redact_urls(lines[0]) if lines else ""
    return f"could not log to {where}{run}: {type(error).__name__}: {text}"
