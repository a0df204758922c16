"""The synth job over a toy folder with a scripted model: each filter drops what it should, the
set round-trips through the loader and the sweep, and an interrupted run re-asks nothing."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from synth_toy import respond, write_docs

from rag_judge.backends.providers.scripted import ScriptedBackend
from rag_judge.backends.wrapper.cache import ResponseCache
from rag_judge.backends.wrapper.client import CallPolicy, ModelClient
from rag_judge.core.errors import InputError
from rag_judge.data.doc_folder import read_document_folder
from rag_judge.data.eval_sets import load_eval_set
from rag_judge.jobs.synth.checks import Context, decide
from rag_judge.jobs.synth.job import SynthRun, cut, synth_job
from rag_judge.jobs.synth.options import SynthOptions
from rag_judge.jobs.synth.writer import write_set
from rag_judge.pipeline.bm25 import BM25Retriever
from rag_judge.runtime.session import open_session
from rag_judge.synth.candidates import Candidate


class Killed(BaseException):
    """Stands for a kill in the middle of a run."""


def _session(backend: ScriptedBackend, cache: ResponseCache | None = None):
    client = ModelClient(backend, cache=cache, policy=CallPolicy(concurrency=1))
    return open_session(client=client, cache=False)


def _context(tmp_path: Path, options: SynthOptions | None = None) -> Context:
    chosen = options or SynthOptions()
    chunks = cut(read_document_folder(write_docs(tmp_path / "docs")).documents, chosen)
    session = _session(ScriptedBackend(respond=respond))
    return Context(session, {c.id: c for c in chunks}, BM25Retriever.build(list(chunks)), chosen)


def _decide(context: Context, kind: str, *chunk_ids: str):
    candidate = Candidate(id=f"{kind}-0", kind=kind, chunk_ids=chunk_ids, language="en")  # type: ignore[arg-type]
    return asyncio.run(decide(candidate, context))


@pytest.mark.parametrize(
    ("chunk", "rejected_by"),
    [
        ("france.txt#0", None),
        ("japan.txt#0", "copies_chunk"),
        ("peru.md#0", "not_a_span"),
        ("kenya.html#0", "unsupported"),
        ("egypt#0", "refers_to_passage"),
    ],
)
def test_each_factual_filter_drops_what_it_should(
    tmp_path: Path, chunk: str, rejected_by: str | None
) -> None:
    verdict = _decide(_context(tmp_path), "factual", chunk)
    assert verdict.rejected_by == rejected_by, verdict.detail
    if rejected_by is None:
        assert verdict.figures["support_all"] == 1.0
        assert verdict.candidate.answer == "Paris"


def test_the_copy_filter_can_be_turned_off(tmp_path: Path) -> None:
    verdict = _decide(_context(tmp_path, SynthOptions(max_overlap=None)), "factual", "japan.txt#0")
    assert verdict.kept
    assert verdict.figures["overlap"] > 0.5  # measured all the same


def test_a_multi_source_question_must_need_both_chunks(tmp_path: Path) -> None:
    context = _context(tmp_path)
    both = _decide(context, "multi_source", "japan.txt#0", "peru.md#0")
    assert both.kept
    assert (both.figures["support_first"], both.figures["support_second"]) == (0.0, 0.0)
    alone = _decide(context, "multi_source", "france.txt#0", "japan.txt#0")  # answer: Paris
    assert alone.rejected_by == "answerable_alone"
    assert alone.figures["support_first"] == 1.0


def test_an_unanswerable_question_must_not_be_answered_by_the_top_10(tmp_path: Path) -> None:
    context = _context(tmp_path)
    declined = _decide(context, "unanswerable", "peru.md#0")
    assert declined.kept
    assert declined.detail == "the generator declined"
    answered = _decide(context, "unanswerable", "japan.txt#0")
    assert answered.rejected_by == "answered_by_top10"
    assert answered.figures["answered"] == 1.0


def test_a_failed_call_is_recorded_with_its_status(tmp_path: Path) -> None:
    context = _context(tmp_path)
    broken = ScriptedBackend(respond=lambda request: "not json at all")
    context = Context(_session(broken), context.chunks, context.retriever, context.options)
    verdict = _decide(context, "factual", "france.txt#0")
    assert verdict.rejected_by == "failed"
    assert verdict.failed
    assert verdict.candidate.status == "parse_error"


def _run(
    tmp_path: Path, backend: ScriptedBackend, cache: ResponseCache | None = None, **options
) -> SynthRun:
    documents = read_document_folder(write_docs(tmp_path / "docs")).documents
    chosen = SynthOptions(
        **({"questions": 4, "multi_source": 0.25, "unanswerable": 0.25} | options)
    )
    return asyncio.run(synth_job(documents, _session(backend, cache), chosen))


def test_the_job_keeps_to_its_quotas_and_drops_near_duplicates(tmp_path: Path) -> None:
    run = _run(
        tmp_path, ScriptedBackend(respond=respond), questions=6, multi_source=0.0, unanswerable=0.0
    )
    by_id = {v.candidate.id: v for v in run.verdicts}
    # six factual candidates, one per passage; only Paris survives every filter, and the
    # Santiago question repeats the Paris one
    assert len(run.verdicts) == 6
    assert [v.candidate.answer for v in run.kept] == ["Paris"]
    duplicates = [v for v in by_id.values() if v.rejected_by == "near_duplicate"]
    assert [v.candidate.answer for v in duplicates] == ["Santiago"]
    assert run.notes
    assert "factual: 1 of 6 kept" in run.notes[0]


def test_the_set_round_trips_through_the_loader(tmp_path: Path) -> None:
    run = _run(tmp_path, ScriptedBackend(respond=respond))
    source = read_document_folder(tmp_path / "docs")
    manifest = write_set(tmp_path / "set", run, source, tmp_path / "docs", SynthOptions())
    loaded = load_eval_set(tmp_path / "set")
    assert [q.id for q in loaded.queries] == [v.candidate.id for v in run.kept]
    assert len(loaded.documents) == len(run.chunks) == 6
    for verdict in run.kept:
        query = next(q for q in loaded.queries if q.id == verdict.candidate.id)
        assert query.type == verdict.candidate.kind
        assert query.extra["source_chunks"] == list(verdict.candidate.chunk_ids)
        relevant = set(loaded.qrels.get(query.id, {}))
        expected = set() if query.type == "unanswerable" else set(verdict.candidate.chunk_ids)
        assert relevant == expected
    rejects = [json.loads(line) for line in (tmp_path / "set/rejects.jsonl").open()]
    assert len(rejects) == len(run.verdicts) - len(run.kept)
    counted = sum(n for f in manifest["synth"]["filters"].values() for n in f["rejected"].values())
    assert counted == len(rejects)
    assert manifest["chunking"] == {"chunker": "none"}
    assert manifest["synth"]["seed"] == 0
    assert manifest["synth"]["model"] == "scripted/test"


def test_an_existing_folder_with_files_is_never_written_over(tmp_path: Path) -> None:
    run = _run(tmp_path, ScriptedBackend(respond=respond))
    target = tmp_path / "mine"
    target.mkdir()
    (target / "notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(InputError, match="has files in it"):
        write_set(
            target, run, read_document_folder(tmp_path / "docs"), tmp_path / "docs", SynthOptions()
        )
    assert [p.name for p in target.iterdir()] == ["notes.txt"]


def test_an_interrupted_run_asks_nothing_twice(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    calls = 0

    def dying(request):
        nonlocal calls
        calls += 1
        if calls == 9:
            raise Killed()
        return respond(request)

    first = ScriptedBackend(respond=dying)
    with pytest.raises(Killed):
        _run(tmp_path, first, cache)
    second = ScriptedBackend(respond=respond)
    resumed = _run(tmp_path, second, cache)
    died = first.requests[8]  # the ninth call raised; calls already in flight went on
    answered = {r.model_dump_json() for r in first.requests if r is not died}
    assert answered
    assert not answered & {r.model_dump_json() for r in second.requests}
    fresh = _run(tmp_path / "again", ScriptedBackend(respond=respond))
    assert [v.candidate for v in resumed.verdicts] == [v.candidate for v in fresh.verdicts]
