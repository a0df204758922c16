"""What every ``rag-judge`` command shares: one-line input errors, consoles, cost lines."""

from __future__ import annotations

import errno
import signal
import sys
import threading
from collections.abc import Callable
from functools import wraps
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich.console import Console

from rag_judge.core.errors import RagJudgeError
from rag_judge.core.types import FAILED_STATUSES
from rag_judge.judges import JUDGES

if TYPE_CHECKING:
    from rag_judge.backends.wrapper.ledger import Ledger
    from rag_judge.jobs.score.result import EvaluationResult

JUDGE_NAMES = tuple(JUDGES)
NOTHING_JUDGED = 3
"""Exit status of a run in which no row got a value because every call failed (results and
statuses are still written). 0: done; 2: bad input; 130: interrupted."""
NOT_LOGGED = 4
"""Exit status of a run that finished and wrote its files, but could not be logged to MLflow
(``--mlflow``)."""
F = TypeVar("F", bound=Callable[..., Any])


class Terminated(BaseException):
    """SIGTERM (what a CI cancellation or ``kill`` sends), raised where the run is, so it
    stops as Ctrl-C does: finished rows flushed, the resume hint, exit 143."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


def renamed(command: click.Command, old: str) -> click.Command:
    """``command`` under the name it had before: unlisted, the same options, and a note on stderr.

    Scripts that call the old name keep working for a release while the note tells their
    authors the new one.
    """

    target = command.callback
    if target is None:
        raise TypeError(f"command {command.name} has no callback")

    def callback(**params: Any) -> Any:
        click.echo(
            f"note: `rag-judge {old}` is now `rag-judge {command.name}`; "
            "the old name will be removed in a later release",
            err=True,
        )
        return click.get_current_context().invoke(target, **params)

    return click.Command(
        old,
        params=command.params,
        callback=callback,
        hidden=True,
        help=f"Deprecated name of `rag-judge {command.name}`.",
        context_settings=command.context_settings,
    )


def friendly_errors(command: F) -> F:
    """Print our input errors as one line on stderr and exit 2, without a traceback; an
    interrupt (Ctrl-C) exits 130 and SIGTERM 143, as shells expect, saying how to resume."""

    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        main_thread = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGTERM, _terminate) if main_thread else None
        try:
            return command(*args, **kwargs)
        except Terminated:
            click.echo(
                "terminated: finished model calls are in the response cache; run the same "
                "command again to resume",
                err=True,
            )
            sys.exit(143)
        except RagJudgeError as error:
            click.echo(f"error: {error}", err=True)
            sys.exit(2)
        except OSError as error:  # a full disk, a read-only folder: what the system said
            click.echo(f"error: {os_error(error)}", err=True)
            sys.exit(2)
        except KeyboardInterrupt:
            click.echo(
                "interrupted: finished model calls are in the response cache; run the same "
                "command again to resume",
                err=True,
            )
            sys.exit(130)
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)

    return wrapper  # type: ignore[return-value]


def os_error(error: OSError) -> str:
    """An error of the file system in one line: what the system said, where, what is kept."""
    where = f": {error.filename!r}" if error.filename else ""
    said = f"{error.strerror or error}{where}"
    if error.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS):
        said += (
            "; finished model calls are in the response cache (and score's finished rows in "
            "OUTPUT.partial): free space and run the same command again"
        )
    return said


def metric_names(text: str) -> list[str]:
    """The judges named in a ``--metrics`` value; an empty list is a usage error, not a no-op."""
    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names:
        raise click.UsageError(f"--metrics names no judge; known: {', '.join(JUDGE_NAMES)}")
    return names


def nothing_judged(result: EvaluationResult) -> str | None:
    """Why a finished run judged nothing, when no metric that calls the model scored a row and
    calls failed (a run that exits 0 with every row a backend_error looks like success in a
    script; exact match and F1 still score such rows, with no model); else None."""
    summaries = [s for s in result.summary(n_resamples=1) if _uses_model(s.metric)]
    if not summaries or any(s.n_scored for s in summaries):
        return None
    failed: dict[str, int] = {}
    for summary in summaries:
        for status, n in summary.statuses.items():
            if status in FAILED_STATUSES:
                failed[status] = failed.get(status, 0) + n
    if not failed:
        return None
    first = next(
        (r.error for s in result.samples for r in s.results.values() if r.status in failed),
        None,
    )
    counts = ", ".join(f"{n} {status}" for status, n in sorted(failed.items()))
    return f"no row could be judged ({counts}); first error: {first}"


def echo_cost(ledger: Ledger) -> None:
    """What each model cost, on stderr: calls, cache hits, tokens (or why unknown), spend."""
    for model in ledger.models:
        click.echo(ledger.describe(model), err=True)


def make_console(*, stderr: bool = False) -> Console:
    """A console that does not squeeze tables to 80 columns when output is piped."""
    found = Console(stderr=stderr)
    return found if found.is_terminal else Console(stderr=stderr, width=160)


def _uses_model(metric: str) -> bool:
    judge = JUDGES.get(metric)
    return judge is None or judge.uses_model
