"""``rag-judge synth``: an eval set from a folder of your own documents."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rag_judge.cli.common import friendly_errors
from rag_judge.cli.options import (
    BASE_URL_HELP,
    CONCURRENCY_HELP,
    call_options,
    json_mode_option,
    model_options,
    no_cache_option,
    output_option,
    scale_out_options,
)
from rag_judge.cli.records import ModelArgs, ScaleOutArgs, gather
from rag_judge.runtime.events import Events

if TYPE_CHECKING:
    from rag_judge.cli.progress import Step
    from rag_judge.jobs.synth.job import SynthRun
    from rag_judge.jobs.synth.options import SynthOptions
    from rag_judge.synth.candidates import Verdict

SHARE = click.FloatRange(0, 1)


@dataclass(frozen=True)
class SynthArgs:
    """What ``synth`` was asked, gathered from click's parameters."""

    docs: Path
    output: Path
    questions: int
    multi_source: float
    unanswerable: float
    language: str | None
    chunker: str
    seed: int
    max_overlap: float
    no_overlap_filter: bool
    no_cache: bool
    model: ModelArgs
    scale: ScaleOutArgs

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> SynthArgs:
        return gather(
            cls, params, model=ModelArgs.from_params(params), scale=ScaleOutArgs.from_params(params)
        )

    def options(self) -> SynthOptions:
        """The job's options record (checked as it is built)."""
        from rag_judge.jobs.synth.options import SynthOptions, parse_chunker

        return SynthOptions(
            questions=self.questions,
            multi_source=self.multi_source,
            unanswerable=self.unanswerable,
            language=self.language,
            chunking=parse_chunker(self.chunker),
            seed=self.seed,
            max_overlap=None if self.no_overlap_filter else self.max_overlap,
        )


class SynthEvents(Events):
    """The bar counts kept questions; the note says how many were written and dropped."""

    def __init__(self, step: Step) -> None:
        self.step, self.written, self.kept = step, 0, 0

    def started(self, total: int) -> None:
        self.step.rename("questions kept", total=total)

    def finished(self, item: Verdict) -> None:
        self.written += 1
        self.kept += item.kept
        self.step.note(f"{self.written} written, {self.written - self.kept} dropped")
        self.step.update(completed=self.kept)


@click.command()
@click.argument("docs", metavar="DOCS", type=click.Path(path_type=Path))
@output_option("New (or empty) folder for the eval set.", required=True)
@click.option(
    "--questions",
    type=click.IntRange(min=1),
    default=50,
    show_default=True,
    help="Questions to keep, of every kind.",
)
@click.option(
    "--multi-source",
    type=SHARE,
    default=0.2,
    show_default=True,
    help="Share of questions that need two passages (joint recall).",
)
@click.option(
    "--unanswerable",
    type=SHARE,
    default=0.1,
    show_default=True,
    help="Share of questions no passage answers (refusals).",
)
@click.option(
    "--language",
    type=click.Choice(["en", "zh"]),
    help="Prompt language (default: detected per passage).",
)
@click.option(
    "--chunker",
    default="structure_aware:100:400",
    show_default=True,
    metavar="NAME[:MIN:MAX[:OVERLAP]]",
    help="How documents are cut: structure_aware or sentence_windows, sizes in characters.",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Seed of the passage order.",
)
@click.option(
    "--max-overlap",
    type=SHARE,
    default=0.5,
    show_default=True,
    help="Drop a question sharing more of its word (Chinese: character) 3-grams with its passage.",
)
@click.option(
    "--no-overlap-filter",
    is_flag=True,
    help="Keep questions that copy their passage (to measure what the filter changes).",
)
@model_options(
    model="Model that writes and checks the questions (default: settings, then local).",
    base_url=BASE_URL_HELP,
    concurrency=CONCURRENCY_HELP,
)
@no_cache_option()
@scale_out_options("candidate questions")
@call_options()
@json_mode_option
@friendly_errors
def synth(**params: Any) -> None:
    """Write an eval set from the documents in DOCS, for `rag-judge sweep SET_DIR`.

    DOCS is a folder of .txt, .md, .html and .jsonl files (one document per file or line).
    Passages are sampled across documents; each question is kept only if its reference is
    supported by its passage(s), it does not copy its passage, and it repeats no other;
    multi-source questions must need both passages, unanswerable ones must not be answered by
    the retriever's top 10. Rejects and their reasons go to rejects.jsonl. Interrupted? Run
    the same command again: finished calls come from the cache.
    """
    from rag_judge.data.doc_folder import read_document_folder
    from rag_judge.jobs.synth.writer import check_new_folder, write_set

    args = SynthArgs.from_params(params)
    options, settings = args.options(), args.model.load()
    target = args.scale.target(args.no_cache, settings)
    check_new_folder(args.output)
    source = read_document_folder(args.docs)
    run = _run(args, settings, options, target, source.documents)
    manifest = write_set(args.output, run, source, args.docs, options)
    _echo_summary(manifest, args.output)


def _run(
    args: SynthArgs, settings: Any, options: SynthOptions, target: Any, documents: Any
) -> SynthRun:
    """The synth job under a progress bar, where --executor and --batch say."""
    import asyncio

    from rag_judge.cli.progress import progress_step
    from rag_judge.cli.scale_out import echo_stages, executor_for
    from rag_judge.jobs.synth.job import synth_job
    from rag_judge.jobs.synth.options import STATE_FILE
    from rag_judge.runtime.session import open_session

    state = args.output.resolve().parent / f".{args.output.name}.{STATE_FILE}"
    session = open_session(settings, cache=not args.no_cache)
    executor = executor_for(target, args.scale.batch, state)
    with progress_step("cutting and indexing") as step:
        run = asyncio.run(
            synth_job(documents, session, options, executor=executor, events=SynthEvents(step))
        )
    if args.scale.batch:
        echo_stages(run.stages, state)
    return run


def _echo_summary(manifest: Mapping[str, Any], folder: Path) -> None:
    """What was kept, what each filter dropped, and the command that sweeps the set."""
    synth = manifest["synth"]
    kept = ", ".join(f"{n} {kind}" for kind, n in synth["kept"].items())
    click.echo(
        f"{folder}: {manifest['counts']['queries']} questions ({kept}) on "
        f"{synth['passages']} passages, {synth['seconds']} s"
    )
    click.echo(f"written: {sum(synth['written'].values())}; dropped by filter:")
    for name, entry in synth["filters"].items():
        if entry["rejected"]:
            counts = ", ".join(f"{n} {kind}" for kind, n in entry["rejected"].items())
            click.echo(f"  {name}: {counts}")
    for note in synth["notes"]:
        click.echo(f"note: {note}", err=True)
    click.echo(f"rejects and reasons: {folder / 'rejects.jsonl'}")
    click.echo(f"next: rag-judge sweep {folder} -o {folder}-sweep")
