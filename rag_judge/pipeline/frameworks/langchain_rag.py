"""A LangChain retriever or runnable chain as the RAG under test.

* A retriever (``langchain_core.retrievers.BaseRetriever``, e.g. ``vectorstore.as_retriever()``)
  is asked once per question for the top K, K = the largest k: a ``VectorStoreRetriever``
  through its ``search_kwargs["k"]`` (LangChain's own knob, as in
  ``as_retriever(search_kwargs={"k": 4})``), any other retriever through a field ``k`` (as
  ``BM25Retriever``, ``TFIDFRetriever`` have). Every k then reads the first k.
* A chain (any other ``Runnable``) answers for itself. Its one retriever is found in the
  chain's graph (``Runnable.get_graph()``, which also lists a retriever that a function step
  closes over), set to k as above for the duration of one call, and
  the chain is invoked once per k; a callback handler records the documents that retriever
  returned, so what each answer was made from is known, not assumed
  (:class:`~rag_judge.pipeline.frameworks.answering.AnsweringRag` checks it).

A chain takes the question as its input, or as the one field of an input object (``input``,
``question`` or ``query`` when it has several); its output is the answer: a string, a message
(its ``content``), or a mapping with ``answer`` (as ``create_retrieval_chain`` returns),
``result`` or ``output``. This module imports langchain_core, so it is loaded only once an
object of LangChain was given.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Final
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable
from langchain_core.vectorstores import VectorStore, VectorStoreRetriever

from rag_judge.core.errors import InputError
from rag_judge.pipeline.external.base import CallableRag, ExternalRag
from rag_judge.pipeline.frameworks.answering import AnsweringRag
from rag_judge.pipeline.frameworks.documents import langchain_passage

INPUT_KEYS: Final = ("input", "question", "query")
"""An input object's field that takes the question, when it has more than one."""
ANSWER_KEYS: Final = ("answer", "result", "output")
"""An output mapping's field that holds the answer."""


def langchain_rag(obj: object, name: str) -> ExternalRag:
    """The sweep's view of a LangChain retriever or chain.

    Raises:
        InputError: a vector store (give its ``as_retriever()``) or another LangChain object
            that neither retrieves nor runs, or a chain whose retriever cannot be found or set.
    """
    if isinstance(obj, BaseRetriever):
        return CallableRag(_RetrieverTopK(obj), name=f"LangChain retriever {name}")
    if isinstance(obj, VectorStore):
        raise InputError(
            f"{name} is a LangChain vector store, not a retriever: give "
            "vectorstore.as_retriever() (the sweep sets its k)",
            field="rag",
        )
    if isinstance(obj, Runnable):
        return AnsweringRag(_ChainAsker(obj, name), name=f"LangChain chain {name}")
    raise InputError(
        f"{name} is a LangChain {type(obj).__name__}, neither a retriever nor a runnable chain",
        field="rag",
    )


@contextmanager
def top_k(retriever: BaseRetriever, k: int) -> Iterator[None]:
    """``retriever`` returns k documents inside the block; its own setting is restored after.

    Raises:
        InputError: the retriever has neither ``search_kwargs`` nor a field ``k``.
    """
    if isinstance(retriever, VectorStoreRetriever) or isinstance(
        getattr(retriever, "search_kwargs", None), dict
    ):
        before = retriever.search_kwargs  # type: ignore[attr-defined]
        retriever.search_kwargs = {**before, "k": k}  # type: ignore[attr-defined]
        try:
            yield
        finally:
            retriever.search_kwargs = before  # type: ignore[attr-defined]
        return
    if isinstance(getattr(retriever, "k", None), int):
        before_k = retriever.k  # type: ignore[attr-defined]
        retriever.k = k  # type: ignore[attr-defined]
        try:
            yield
        finally:
            retriever.k = before_k  # type: ignore[attr-defined]
        return
    raise InputError(
        f"cannot tell the LangChain {type(retriever).__name__} how many documents to return: it "
        "has neither search_kwargs nor a field k",
        field="rag",
    )


class _RetrieverTopK:
    """``fn(question, k)`` over a retriever: its top k as passage dicts."""

    def __init__(self, retriever: BaseRetriever) -> None:
        self.retriever = retriever

    def __call__(self, question: str, k: int) -> list[dict[str, Any]]:
        with top_k(self.retriever, k):
            documents = self.retriever.invoke(question)
        return [langchain_passage(d) for d in documents]


class _Seen(BaseCallbackHandler):
    """Records the documents every retriever run in a chain returned."""

    def __init__(self) -> None:
        self.documents: list[list[Document]] = []

    def on_retriever_end(
        self, documents: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        self.documents.append(list(documents))


class _ChainAsker:
    """``ask(question, k)`` for a chain: its answer, and what its retriever returned."""

    def __init__(self, chain: Runnable[Any, Any], name: str) -> None:
        self.chain = chain
        self.name = name
        self.retriever = _the_retriever(chain, name)
        self.input_key = _input_key(chain)

    def __call__(self, question: str, k: int) -> tuple[object, list[Mapping[str, Any]]]:
        seen = _Seen()
        given: object = question if self.input_key is None else {self.input_key: question}
        with top_k(self.retriever, k):
            output = self.chain.invoke(given, config={"callbacks": [seen]})
        if len(seen.documents) != 1:
            raise InputError(
                f"{self.name} ran its retriever {len(seen.documents)} times for one question; "
                "the sweep needs one retrieval per answer",
                field="rag",
            )
        return _answer(output, self.name), [langchain_passage(d) for d in seen.documents[0]]


def _the_retriever(chain: Runnable[Any, Any], name: str) -> BaseRetriever:
    found = {
        id(node.data): node.data
        for node in chain.get_graph().nodes.values()
        if isinstance(node.data, BaseRetriever)
    }
    if len(found) != 1:
        raise InputError(
            f"{name}: found {len(found)} retrievers in the chain's graph, not one; the sweep "
            "sets the k of the one retriever a chain answers from: let the chain retrieve "
            "through a LangChain retriever (vectorstore.as_retriever()), as a step or in a "
            "function that uses it",
            field="rag",
        )
    return next(iter(found.values()))


def _input_key(chain: Runnable[Any, Any]) -> str | None:
    """None when the chain takes the question itself, else the input field that takes it."""
    schema = chain.get_input_jsonschema()
    properties = schema.get("properties")
    if schema.get("type") != "object" or not isinstance(properties, dict) or not properties:
        return None
    if len(properties) == 1:
        return str(next(iter(properties)))
    return next((key for key in INPUT_KEYS if key in properties), None) or str(
        next(iter(schema.get("required") or properties))
    )


def _answer(output: object, name: str) -> object:
    if isinstance(output, BaseMessage):
        return output.content
    if isinstance(output, Mapping):
        for key in ANSWER_KEYS:
            if key in output:
                return output[key]
        raise InputError(
            f"{name} returned a mapping without any of {', '.join(ANSWER_KEYS)} "
            f"(keys: {', '.join(map(str, output))})",
            field="rag",
        )
    return output
