"""``rag-judge label``: label judged rows in the browser, one at a time, into a log that
``calibrate --labels`` reads."""

from __future__ import annotations

import contextlib
import getpass
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rag_judge.calibration.sampling import STRATEGIES
from rag_judge.cli.common import Terminated, friendly_errors
from rag_judge.cli.options import output_option
from rag_judge.judges import DEFAULT_CALIBRATED

if TYPE_CHECKING:
    from rag_judge.labelling.store import LabelStore


@click.command("label")
@click.argument("scores", type=click.Path(dir_okay=False, path_type=Path))
@output_option(
    "The labels (JSON Lines): an append-only log, each label written as it is given; "
    "resumed when the file exists.",
    file=True,
    required=True,
)
@click.option("--metric", help=f"The judge's metric to label (default: {DEFAULT_CALIBRATED}).")
@click.option(
    "--sample",
    type=click.IntRange(min=1),
    metavar="N",
    help="Label N rows drawn by --strategy (default: every scored row, in file order).",
)
@click.option(
    "--strategy",
    type=click.Choice(STRATEGIES),
    help="How the sample is drawn (default random): random keeps calibrate's figures and PPI "
    "unbiased; stratified takes equal numbers from each fifth of the judge's value; "
    "uncertain the rows nearest 0.5.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the sample.")
@click.option("--annotator", metavar="NAME", help="Written with each label (default: your login).")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Port on 127.0.0.1 (0: a free one).",
)
@click.option("--no-browser", is_flag=True, help="Print the page's address; open no browser.")
@friendly_errors
def label_command(
    scores: Path,
    output: Path,
    metric: str | None,
    sample: int | None,
    strategy: Any,
    seed: int,
    annotator: str | None,
    port: int,
    no_browser: bool,
) -> None:
    """Label judged rows in a local page: the question, the passages, the answer and the
    judge's claims, one row at a time, keyboard first (s supported, n not supported, k skip,
    u undo). SCORES is the output of `rag-judge score`.

    Each label is appended to -o as it is given, so nothing is lost when the tab or the server
    closes; the same command resumes at the first unlabelled row. The page is served on
    127.0.0.1 behind a random token in its address. Then: `rag-judge calibrate --scores SCORES
    --labels LABELS`.
    """
    store = _open_store(scores, output, metric, sample, strategy, seed, annotator)
    _serve(store, port, open_browser=not no_browser)


def _open_store(
    scores: Path,
    output: Path,
    metric: str | None,
    sample: int | None,
    strategy: Any,
    seed: int,
    annotator: str | None,
) -> LabelStore:
    """The checked inputs, the sample and the log (resumed when it exists), said on stderr."""
    from rag_judge.labelling.plan import plan_labelling
    from rag_judge.labelling.store import LabelStore
    from rag_judge.runtime.outputs import check_output_file

    check_output_file(output, inputs=[scores])
    name = metric or DEFAULT_CALIBRATED
    plan = plan_labelling(scores, name, sample=sample, strategy=strategy, seed=seed)
    store = LabelStore(output, plan, annotator or _login())
    population = plan.sampling.population
    if sample is not None and sample > population:
        click.echo(
            f"--sample {sample} is more than the {population} scored rows: all of them", err=True
        )
    how = "" if plan.sampling.seed is None else f", {plan.sampling.strategy}, seed {seed}"
    said = f"labelling {len(plan.ids)} of {population} scored rows of {scores} ({name}{how})"
    left_out = [(plan.unscored, "without a value"), (plan.not_judged, f"without {name}")]
    said += "".join(f"; {_rows(n)} {why} not offered" for n, why in left_out if n)
    click.echo(said, err=True)
    if store.repaired:
        click.echo(f"{output}: dropped a last line cut off mid-write (never saved)", err=True)
    if store.log.events:
        click.echo(f"resuming {output}: {_progress(store)}", err=True)
    return store


def _serve(store: LabelStore, port: int, *, open_browser: bool) -> None:
    """Serve the page until Ctrl-C; say where, and at the end what the log holds."""
    from rag_judge.labelling.app import label_app, new_token
    from rag_judge.labelling.serve import address, bind, serve

    token = new_token()
    sock = bind(port)
    url = address(sock, token)

    def ready() -> None:
        click.echo(f"label at {url}  (Ctrl-C stops; each label is saved as given)", err=True)
        if open_browser and _has_display():
            import webbrowser

            webbrowser.open(url)

    with contextlib.suppress(KeyboardInterrupt, Terminated):  # how a user stops it
        serve(label_app(store, token), sock, ready=ready)
    click.echo(f"stopped: {_progress(store)} in {store.path}", err=True)


def _progress(store: LabelStore) -> str:
    log, total = store.log, len(store.plan.ids)
    return f"{len(log.labels)} of {total} labelled, {len(log.skipped)} skipped"


def _has_display() -> bool:
    """Whether a browser would open in a window: without one, Python's webbrowser would run a
    text browser in this terminal, in front of the server."""
    return sys.platform in ("darwin", "win32") or any(
        os.environ.get(name) for name in ("DISPLAY", "WAYLAND_DISPLAY")
    )


def _rows(n: int) -> str:
    return f"{n} row" if n == 1 else f"{n} rows"


def _login() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name (a container without a passwd entry)
        return "anonymous"
