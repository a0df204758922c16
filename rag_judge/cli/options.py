"""The options more than one command takes, each spelled once here as a decorator.

A command picks the groups it takes and, where the text differs, gives each option its own
help; names, types and defaults stay here. :mod:`rag_judge.cli.records` gathers the values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, get_args

import click

from rag_judge.backends.types import JSON_MODES
from rag_judge.cli.common import JUDGE_NAMES, F
from rag_judge.judges import DEFAULT_METRICS
from rag_judge.judges.work import JudgeMode

BASE_URL_HELP = "OpenAI-compatible server for openai/ and litellm/ models."
CONCURRENCY_HELP = "Model calls in flight."
NO_CACHE_HELP = "Do not read or write the response cache."

MODEL_OPTIONS: dict[str, dict[str, Any]] = {
    "model": {},
    "generator": {},
    "judge": {},
    "embeddings": {},
    "base_url": {},
    "generator_base_url": {},
    "judge_base_url": {},
    "concurrency": {"type": click.IntRange(min=1)},
    "threads": {"type": click.IntRange(min=1)},
}
"""The model options, in the order every command lists them, with what click needs beyond a help."""


def _added(command: F, options: Sequence[Callable[[Any], Any]]) -> F:
    """``command`` with ``options``, listed in its help in the order given."""
    for option in reversed(options):
        command = option(command)
    return command


def model_options(**helps: str) -> Callable[[F], F]:
    """The model options a command takes, named by ``helps`` (``base_url="..."``), each with its
    help; they override settings of the same name."""
    names = sorted(helps, key=list(MODEL_OPTIONS).index)
    options = [
        click.option(f"--{name.replace('_', '-')}", help=helps[name], **MODEL_OPTIONS[name])
        for name in names
    ]
    return lambda command: _added(command, options)


def call_options(prefix: str = "") -> Callable[[F], F]:
    """``--timeout`` and ``--max-attempts``: how long a model call (or a RAG endpoint) may take
    and how often a transient failure is retried (settings ``timeout``, ``max_attempts``)."""
    options = [
        click.option(
            "--timeout",
            type=click.FloatRange(min=0, min_open=True, max=86_400),
            help=f"{prefix}Seconds per attempt of a model call, or of a request to a --rag "
            "endpoint (default: settings, then 120).",
        ),
        click.option(
            "--max-attempts",
            type=click.IntRange(min=1, max=100),
            help=f"{prefix}Attempts per model call for transient failures (default: settings, "
            "then 4).",
        ),
    ]
    return lambda command: _added(command, options)


def json_mode_option(command: F) -> F:
    """``--json-mode``: how JSON schemas are sent to a server (a setting, ``json_mode``)."""
    return click.option(
        "--json-mode",
        type=click.Choice(JSON_MODES),
        help="How openai/, openai-compatible/ and litellm/ servers get the JSON schema: auto "
        "(json_schema, json_object if refused; default), json_schema, json_object, or none "
        "(no response_format: for a server that fails on it).",
    )(command)


def judge_mode_options(command: F) -> F:
    """``--judge-mode`` and ``--no-reasons``: how the judges use the model."""
    return _added(
        command,
        [
            click.option(
                "--judge-mode",
                type=click.Choice(get_args(JudgeMode)),
                help="score: read and score (claims split without a model, verdicts from "
                "one-token yes/no probabilities; default for local/ models); generate: claims, "
                "verdicts and reasons written as JSON (default for API models).",
            ),
            click.option(
                "--no-reasons",
                is_flag=True,
                help="Score mode: skip the one-line reason written for each claim that ends "
                "unsupported (the only text the scoring path writes; a sweep writes them after "
                "it, for the rows its report shows).",
            ),
        ],
    )


def scale_out_options(unit: str) -> Callable[[F], F]:
    """``--executor``, ``--workers`` and ``--batch``: the ways out of one process; ``unit`` is
    what is split over Ray workers (rows, questions)."""
    options = [
        click.option(
            "--executor",
            default="local",
            show_default=True,
            metavar="local|ray|ray://ADDRESS|ray:auto",
            help=f"Where {unit} are judged: this process, a new local Ray cluster, or an "
            "existing one (pip install 'rag-judge[ray]').",
        ),
        click.option(
            "--workers",
            type=click.IntRange(min=1),
            default=2,
            show_default=True,
            help="--executor ray: Ray workers (CPUs) of a new local cluster, and the number the "
            "tasks are sized for.",
        ),
        click.option(
            "--batch",
            is_flag=True,
            help="Send the calls through the server's Batch API (openai/, openai-compatible/), "
            "in stages over the response cache; an interrupted wait resumes the same batch.",
        ),
    ]
    return lambda command: _added(command, options)


def gate_options(command: F) -> F:
    """``--fail-under``, ``--gate-on``, ``--fail-if-worse``, ``--margin``,
    ``--allow-unjudged`` and ``--junit``."""
    return _added(
        command,
        [
            click.option(
                "--fail-under",
                metavar="METRIC=X,...",
                help="Exit 1 when a metric's mean is below its bound (comma-separated METRIC=X "
                "pairs, each X in [0, 1]).",
            ),
            click.option(
                "--gate-on",
                type=click.Choice(["mean", "ci-low"]),
                default="mean",
                show_default=True,
                help="--fail-under compares the mean, or the lower end of its 95% CI, with the "
                "bound.",
            ),
            click.option(
                "--fail-if-worse",
                is_flag=True,
                help="Exit 1 when a metric's CI of NEW - BASE lies wholly below -MARGIN (noise "
                "does not fail the build).",
            ),
            click.option(
                "--margin",
                type=click.FloatRange(min=0),
                default=0.0,
                show_default=True,
                help="--fail-if-worse: a drop counts only when the whole CI lies below -MARGIN.",
            ),
            click.option(
                "--allow-unjudged",
                is_flag=True,
                help="Let the gate pass when some gated rows could not be judged (a model call "
                "failed after its retries); they are still counted. Without it such rows fail "
                "the gate.",
            ),
            click.option(
                "--junit",
                type=click.Path(dir_okay=False, path_type=Path),
                help="Write the gate's checks as JUnit XML (one test case per check).",
            ),
        ],
    )


def bootstrap_options(seed_help: str) -> Callable[[F], F]:
    """``--resamples`` and ``--seed``: the bootstrap every interval of a command uses."""
    options = [
        click.option(
            "--resamples",
            type=click.IntRange(min=1),
            default=2000,
            show_default=True,
            help="Bootstrap resamples per interval.",
        ),
        click.option("--seed", type=int, default=0, show_default=True, help=seed_help),
    ]
    return lambda command: _added(command, options)


def output_option(help: str, *, file: bool = False, required: bool = False) -> Callable[[F], F]:
    """``-o/--output``: a file (``file``) or a folder the command writes."""
    kind = click.Path(file_okay=file, dir_okay=not file, path_type=Path)
    return click.option("-o", "--output", type=kind, required=required, help=help)


def metrics_option(command: F) -> F:
    """``--metrics``: the judges a command runs."""
    return click.option(
        "--metrics",
        default=",".join(DEFAULT_METRICS),
        show_default=True,
        help=f"Comma-separated judges; known: {', '.join(JUDGE_NAMES)}.",
    )(command)


def limit_option(help: str) -> Callable[[F], F]:
    """``--limit``: only the first N of what a command reads."""
    return click.option("--limit", type=click.IntRange(min=1), help=help)


def no_cache_option(help: str = NO_CACHE_HELP) -> Callable[[F], F]:
    """``--no-cache``: neither read nor write the response cache."""
    return click.option("--no-cache", is_flag=True, help=help)


MLFLOW_HELP = (
    "Also log the run to MLflow: a file:FOLDER, sqlite:///FILE.db or http(s):// tracking "
    "server (parameters, metrics with CIs, the files; pip install 'rag-judge[mlflow]'). Tried "
    "before the run; the files are written first, so a store that fails loses none (exit 4)."
)


def mlflow_option(command: F) -> F:
    """``--mlflow TRACKING_URI``: log the finished run to an MLflow tracking store."""
    return click.option("--mlflow", metavar="TRACKING_URI", help=MLFLOW_HELP)(command)
