"""``--mlflow``: try the tracking store before a run, log the run after its files are written.

The option is spelled once (:func:`rag_judge.cli.options.mlflow_option`); ``sweep``, ``score``
and ``calibrate`` call :func:`check_mlflow` with their other input checks, before any model
call, and :func:`log_to_mlflow` last. A store that fails then costs nothing written: the error
says where the files are, and the command exits :data:`NOT_LOGGED`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from rag_judge.cli.common import NOT_LOGGED
from rag_judge.core.errors import RagJudgeError
from rag_judge.core.redact import redact_url

if TYPE_CHECKING:
    from rag_judge.integrations.tracking_store import TrackedRun


def check_mlflow(uri: str | None) -> None:
    """With ``--mlflow``: MLflow installed, the URI one it takes, the store answering.

    Raises:
        RagJudgeError: any of them not so (printed as one line, exit 2, before any model call).
    """
    if uri is not None:
        from rag_judge.integrations.tracking_store import check_tracking

        check_tracking(uri)


def log_to_mlflow(uri: str | None, build: Callable[[], TrackedRun], files: Path | None) -> None:
    """With ``--mlflow``: log the run ``build`` describes and say where; on failure, say why
    and where the run's files are, and exit :data:`NOT_LOGGED`."""
    if uri is None:
        return
    from rag_judge.integrations.tracking_store import log_run

    try:
        run_id = log_run(uri, build())
    except RagJudgeError as error:
        kept = "" if files is None else f"; the run's files are in {files}"
        click.echo(f"error: {error}{kept}", err=True)
        sys.exit(NOT_LOGGED)
    click.echo(f"logged to MLflow at {redact_url(uri)}: run {run_id}", err=True)
