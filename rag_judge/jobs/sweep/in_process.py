"""The k-sweep in this process: build the RAG under test for an eval set (or load the user's),
then run the sweep with the session's models.

The eval set's documents are chunked structure-aware (:mod:`rag_judge.pipeline.build`), the
retriever is built over the chunks with its index cached under the settings' cache directory,
and one session's cached, rate-limited model client generates and judges. Answer relevancy and
dense retrieval share the session's embedder for the set's language
(:meth:`~rag_judge.runtime.session.Session.embedder_for`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from rag_judge.backends.wrapper.embedding_client import EmbeddingClient
from rag_judge.data.eval_sets import EvalSet
from rag_judge.jobs.sweep.options import SweepOptions
from rag_judge.jobs.sweep.plan import check_ks_fit
from rag_judge.jobs.sweep.result import SweepResult
from rag_judge.jobs.sweep.run import sweep_questions
from rag_judge.judges import JUDGES
from rag_judge.pipeline.base import Retriever
from rag_judge.pipeline.build import ChunkSize, build_retriever, sized_chunks
from rag_judge.pipeline.chunking import Chunk
from rag_judge.pipeline.external.base import ExternalRag
from rag_judge.runtime.events import QUIET, Events
from rag_judge.runtime.session import Session


@dataclass(frozen=True)
class RagUnderTest:
    """The chunks of an eval set's corpus and the retriever over them."""

    chunks: tuple[Chunk, ...]
    retriever: Retriever
    embedder: EmbeddingClient | None
    """The embedder of dense retrieval and answer relevancy (None when neither needs one)."""


async def build_rag(
    eval_set: EvalSet,
    session: Session,
    *,
    retriever: str = "bm25",
    chunk: ChunkSize | None = None,
    needs_embedder: bool,
) -> RagUnderTest:
    """Chunk the corpus (re-cut to ``chunk``, else as the set's manifest says, else the
    default) and build the named retriever, with indexes cached on disk."""
    chunks = sized_chunks(eval_set, chunk)
    embedder = None
    if needs_embedder or retriever != "bm25":
        embedder = session.embedder_for(eval_set.language)
    chosen = await build_retriever(
        retriever, chunks, embedder=embedder, cache_dir=session.settings.cache_dir
    )
    return RagUnderTest(chunks, chosen, embedder)


@dataclass(frozen=True)
class PreparedSweep:
    """The RAG under test, built once, and how to sweep any share of the set's questions with
    it (the whole set, or one batch of a sweep ``--until-decided``)."""

    session: Session
    under_test: RagUnderTest | ExternalRag
    """Our retriever over the set's chunks, or the user's RAG."""
    embedder: EmbeddingClient | None
    """The embedder of answer relevancy (None when no judge needs one)."""

    async def sweep(
        self, questions: EvalSet, options: SweepOptions, events: Events = QUIET
    ) -> SweepResult:
        """Sweep ``questions`` (a share of the prepared set) with ``options``, undecided."""
        session = self.session
        if isinstance(self.under_test, RagUnderTest):
            return await sweep_questions(
                questions,
                options,
                retriever=self.under_test.retriever,
                chunks=self.under_test.chunks,
                client=session.client,
                generator=session.generator,
                embedder=self.embedder,
                on_question=events.finished,
            )
        return await sweep_questions(
            questions,
            options,
            rag=self.under_test,
            client=session.client,
            generator=session.generator,
            embedder=self.embedder,
            on_question=events.finished,
        )


async def prepare_sweep(loaded: EvalSet, session: Session, options: SweepOptions) -> PreparedSweep:
    """Build the RAG under test for ``loaded`` (or load the user's), checked against the ks."""
    names = options.metrics
    needs_embedder = any(JUDGES[n].needs_embedder for n in names if n not in loaded.not_applicable)
    if options.rag is not None:
        from rag_judge.pipeline.external.load import external_rag

        embedder = session.embedder_for(loaded.language) if needs_embedder else None
        rag = external_rag(options.rag, timeout=session.settings.timeout)
        return PreparedSweep(session, rag, embedder)
    built = await build_rag(
        loaded,
        session,
        retriever=options.retriever,
        chunk=options.chunk,
        needs_embedder=needs_embedder,
    )
    check_ks_fit(options.ks, len(built.chunks))
    if options.rerank is not None:
        from rag_judge.pipeline.rerank import RerankedRetriever, reranker_from_spec

        texts = {c.id: c.text for c in built.chunks}
        reranker = reranker_from_spec(options.rerank, client=session.generator, chunk_texts=texts)
        reranked = RerankedRetriever(built.retriever, reranker, depth=options.rerank_depth)
        built = dataclasses.replace(built, retriever=reranked)
    return PreparedSweep(session, built, built.embedder)


async def sweep_in_process(
    loaded: EvalSet, session: Session, options: SweepOptions, events: Events = QUIET
) -> SweepResult:
    """The sweep in this process: build the RAG under test (or load the user's), then sweep."""
    prepared = await prepare_sweep(loaded, session, options)
    events.started(len(loaded.queries))
    return await prepared.sweep(loaded, options, events)
