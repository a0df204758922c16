"""What every ``rag-judge`` command shares: one-line input errors, consoles, cost lines."""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import wraps
from typing import TYPE_CHECKING, Any, TypeVar, get_args

import click
from rich.console import Console

from rag_judge.backends.types import JSON_MODES
from rag_judge.core.errors import RagJudgeError
from rag_judge.core.types import FAILED_STATUSES
from rag_judge.judges import JUDGES
from rag_judge.judges.work import JudgeMode

if TYPE_CHECKING:
    from rag_judge.backends.ledger import Ledger
    from rag_judge.jobs.score.result import EvaluationResult

JUDGE_NAMES = tuple(JUDGES)
NOTHING_JUDGED = 3
"""Exit status of a run in which no row got a value because every call failed (results and
statuses are still written). 0: done; 2: bad input; 130: interrupted."""
F = TypeVar("F", bound=Callable[..., Any])


def friendly_errors(command: F) -> F:
    """Print our input errors as one line on stderr and exit 2, without a traceback; an
    interrupt (Ctrl-C) exits 130, as shells expect, saying how to resume."""

    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except RagJudgeError as error:
            click.echo(f"error: {error}", err=True)
            sys.exit(2)
        except KeyboardInterrupt:
            click.echo(
                "interrupted: finished model calls are in the response cache; run the same "
                "command again to resume",
                err=True,
            )
            sys.exit(130)

    return wrapper  # type: ignore[return-value]


def judge_mode_options(command: F) -> F:
    """``--judge-mode`` and ``--no-reasons``: how the judges use the model."""
    command = click.option(
        "--no-reasons",
        is_flag=True,
        help="Score mode: skip the one-line reason written for each claim that ends "
        "unsupported (the only text the scoring path writes).",
    )(command)
    return click.option(
        "--judge-mode",
        type=click.Choice(get_args(JudgeMode)),
        help="score: read and score (claims split without a model, verdicts from one-token "
        "yes/no probabilities; default for local/ models); generate: claims, verdicts and "
        "reasons written as JSON (default for API models).",
    )(command)


def bootstrap_options(seed_help: str) -> Callable[[F], F]:
    """``--resamples`` and ``--seed``: the bootstrap every interval of a command uses."""

    def add(command: F) -> F:
        command = click.option("--seed", type=int, default=0, show_default=True, help=seed_help)(
            command
        )
        return click.option(
            "--resamples",
            type=click.IntRange(min=1),
            default=2000,
            show_default=True,
            help="Bootstrap resamples per interval.",
        )(command)

    return add


def json_mode_option(command: F) -> F:
    """``--json-mode``: how JSON schemas are sent to a server (a setting, ``json_mode``)."""
    return click.option(
        "--json-mode",
        type=click.Choice(JSON_MODES),
        help="How openai/, openai-compatible/ and litellm/ servers get the JSON schema: auto "
        "(json_schema, json_object if refused; default), json_schema, json_object, or none "
        "(no response_format: for a server that fails on it).",
    )(command)


def metric_names(text: str) -> list[str]:
    """The judges named in a ``--metrics`` value; an empty list is a usage error, not a no-op."""
    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names:
        raise click.UsageError(f"--metrics names no judge; known: {', '.join(JUDGE_NAMES)}")
    return names


def nothing_judged(result: EvaluationResult) -> str | None:
    """Why a finished run judged nothing, when no metric scored a row and calls failed (a run
    that exits 0 with every row a backend_error looks like success in a script); else None."""
    summaries = result.summary(n_resamples=1)
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
