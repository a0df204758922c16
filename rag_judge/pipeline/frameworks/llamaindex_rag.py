"""A LlamaIndex retriever or query engine as the RAG under test.

* A retriever (``llama_index.core.base.base_retriever.BaseRetriever``, e.g.
  ``index.as_retriever()``) is asked once per question for the top K, K = the largest k,
  through ``similarity_top_k`` (LlamaIndex's own knob: ``as_retriever(similarity_top_k=4)``,
  a settable property of ``VectorIndexRetriever``). Every k then reads the first k.
* A query engine answers for itself: its retriever (``engine.retriever``, as
  ``RetrieverQueryEngine`` exposes it) is set to k for one ``query`` and the engine asked once
  per k; the response's ``source_nodes`` say what each answer was made from
  (:class:`~rag_judge.pipeline.frameworks.answering.AnsweringRag` checks it).

This module imports llama_index.core, so it is loaded only once an object of LlamaIndex was given.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.indices.base import BaseIndex

from rag_judge.core.errors import InputError
from rag_judge.pipeline.external.base import CallableRag, ExternalRag
from rag_judge.pipeline.frameworks.answering import AnsweringRag
from rag_judge.pipeline.frameworks.documents import llamaindex_passage


def llamaindex_rag(obj: object, name: str) -> ExternalRag:
    """The sweep's view of a LlamaIndex retriever or query engine.

    Raises:
        InputError: an index (give ``as_retriever()`` or ``as_query_engine()``), another
            LlamaIndex object, or a query engine whose retriever cannot be found or set.
    """
    if isinstance(obj, BaseRetriever):
        _check_settable(obj, name)
        return CallableRag(_RetrieverTopK(obj), name=f"LlamaIndex retriever {name}")
    if isinstance(obj, BaseQueryEngine):
        retriever = getattr(obj, "retriever", None)
        if not isinstance(retriever, BaseRetriever):
            raise InputError(
                f"{name} is a LlamaIndex {type(obj).__name__} without a retriever the sweep can "
                "reach (engine.retriever): build it with index.as_query_engine() or "
                "RetrieverQueryEngine",
                field="rag",
            )
        _check_settable(retriever, name)
        return AnsweringRag(_EngineAsker(obj, retriever), name=f"LlamaIndex query engine {name}")
    if isinstance(obj, BaseIndex):
        raise InputError(
            f"{name} is a LlamaIndex index, not a retriever: give index.as_retriever() or "
            "index.as_query_engine() (the sweep sets similarity_top_k)",
            field="rag",
        )
    raise InputError(
        f"{name} is a LlamaIndex {type(obj).__name__}, neither a retriever nor a query engine",
        field="rag",
    )


def _check_settable(retriever: BaseRetriever, name: str) -> None:
    if not isinstance(getattr(retriever, "similarity_top_k", None), int):
        raise InputError(
            f"{name}: cannot tell the LlamaIndex {type(retriever).__name__} how many nodes to "
            "return: it has no similarity_top_k",
            field="rag",
        )


@contextmanager
def top_k(retriever: BaseRetriever, k: int) -> Iterator[None]:
    """``retriever`` returns k nodes inside the block; its own setting is restored after."""
    before = retriever.similarity_top_k  # type: ignore[attr-defined]
    retriever.similarity_top_k = k  # type: ignore[attr-defined]
    try:
        yield
    finally:
        retriever.similarity_top_k = before  # type: ignore[attr-defined]


class _RetrieverTopK:
    """``fn(question, k)`` over a retriever: its top k nodes as passage dicts."""

    def __init__(self, retriever: BaseRetriever) -> None:
        self.retriever = retriever

    def __call__(self, question: str, k: int) -> list[dict[str, Any]]:
        with top_k(self.retriever, k):
            nodes = self.retriever.retrieve(question)
        return [llamaindex_passage(n) for n in nodes]


class _EngineAsker:
    """``ask(question, k)`` for a query engine: its answer and its response's source nodes."""

    def __init__(self, engine: BaseQueryEngine, retriever: BaseRetriever) -> None:
        self.engine = engine
        self.retriever = retriever

    def __call__(self, question: str, k: int) -> tuple[object, list[Mapping[str, Any]]]:
        with top_k(self.retriever, k):
            response = self.engine.query(question)
        answer = getattr(response, "response", response)
        sources = getattr(response, "source_nodes", None) or []
        return answer, [llamaindex_passage(n) for n in sources]
