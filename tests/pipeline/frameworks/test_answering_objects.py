"""A LangChain chain and a LlamaIndex query engine answer for themselves: k must reach them.

Each "model" here is a plain function of the prompt the framework built (no LLM, no mock of the
library): it answers with the document ids it was shown, so the answer at k says how many
documents, and which, the chain or engine really answered from.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from framework_stores import Stores
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
from llama_index.core.llms.callbacks import llm_completion_callback

from rag_judge.backends import ModelClient
from rag_judge.backends.providers.scripted import ScriptedBackend
from rag_judge.core.errors import InputError
from rag_judge.jobs.sweep import SweepOptions
from rag_judge.jobs.sweep.run import sweep_questions
from rag_judge.pipeline.external.load import rag_from_object

KS = (1, 2, 3)
IDS = re.compile(r"doc_id: (\S+)")


def shown_ids(prompt: str) -> str:
    """The answer of the function-as-model: the doc ids in its prompt, in order."""
    return ",".join(IDS.findall(prompt)) or "none"


def lcel_chain(retriever: Any) -> Any:
    """The LangChain tutorial's shape: retriever | format, prompt, model, output."""

    def context(documents: list[Any]) -> str:
        return "\n\n".join(f"doc_id: {d.metadata['doc_id']}\n{d.page_content}" for d in documents)

    prompt = ChatPromptTemplate.from_template("Context:\n{context}\n\nQuestion: {question}")
    model = RunnableLambda(lambda value: shown_ids(value.to_string()))
    return {"context": retriever | context, "question": RunnablePassthrough()} | prompt | model


class ReadsIds(CustomLLM):
    """A LlamaIndex LLM whose completion is the doc ids in its prompt."""

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(context_window=100_000, num_output=64)

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=shown_ids(prompt))

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError


def swept(qdrant_stores: Stores, rag: Any, *, answers: bool = True) -> Any:
    backend = ScriptedBackend(respond=lambda request: "unused")
    result = asyncio.run(
        sweep_questions(
            qdrant_stores.eval_set,
            SweepOptions(ks=KS, metrics=("answer_f1",)),
            client=ModelClient(backend),
            rag=rag,
        )
    )
    assert (backend.requests == []) is answers  # an object that answers: nothing generated
    return result.per_question.set_index(["question_id", "k"]).sort_index()


def check_answers_follow_k(table: Any) -> None:
    """The answer at k names exactly the first k retrieved documents' ids."""
    for (qid, k), row in table.iterrows():
        top = table.loc[(qid, max(KS))]
        assert row["answer_source"] == "external"
        assert len(row["answer"].split(",")) == k, (qid, k, row["answer"])
        assert row["answer"].split(",") == top["answer"].split(",")[:k]


def test_a_langchain_chain_answers_at_each_k_from_k_documents(qdrant_stores: Stores) -> None:
    retriever = qdrant_stores.langchain_store.as_retriever(search_kwargs={"k": 4})
    table = swept(qdrant_stores, lcel_chain(retriever))
    check_answers_follow_k(table)
    assert retriever.search_kwargs == {"k": 4}  # the user's setting is restored
    first = table.loc[(qdrant_stores.eval_set.queries[0].id, 1)]
    assert first["answer"] == "DEV_0"


def test_a_llamaindex_query_engine_answers_at_each_k_from_k_nodes(qdrant_stores: Stores) -> None:
    engine = qdrant_stores.llamaindex_index.as_query_engine(llm=ReadsIds(), similarity_top_k=4)
    table = swept(qdrant_stores, engine)
    check_answers_follow_k(table)
    assert engine.retriever.similarity_top_k == 4


def test_the_chain_answers_from_the_same_documents_as_the_retriever(qdrant_stores: Stores) -> None:
    retriever = qdrant_stores.langchain_store.as_retriever()
    chain, alone = (
        swept(qdrant_stores, lcel_chain(retriever)),
        swept(qdrant_stores, retriever, answers=False),
    )
    measures = ["doc_recall", "doc_mrr", "text_hit_rate"]
    assert chain[measures].equals(alone[measures])


def test_a_chain_whose_retriever_ignores_k_is_refused(qdrant_stores: Stores) -> None:
    retriever = qdrant_stores.langchain_store.as_retriever()
    fixed = RunnableLambda(lambda question: retriever.invoke(question, k=3))
    chain = (
        {"context": retriever, "question": RunnablePassthrough()}
        | RunnableLambda(lambda value: {**value, "context": fixed.invoke(value["question"])})
        | RunnableLambda(lambda value: str(len(value["context"])))
    )
    with pytest.raises(InputError, match="ran its retriever 2 times"):
        swept(qdrant_stores, chain)


def test_a_chain_without_a_visible_retriever_is_refused(qdrant_stores: Stores) -> None:
    store = qdrant_stores.langchain_store  # searched directly: no retriever whose k could be set
    hidden = RunnableLambda(lambda question: str(len(store.similarity_search(question, k=4))))
    with pytest.raises(InputError, match="found 0 retrievers in the chain's graph"):
        rag_from_object(hidden, name="hidden")


def test_a_store_or_an_index_is_not_a_rag_and_the_message_says_what_is(
    qdrant_stores: Stores,
) -> None:
    with pytest.raises(InputError, match=r"give vectorstore\.as_retriever\(\)"):
        rag_from_object(qdrant_stores.langchain_store, name="store")
    with pytest.raises(InputError, match=r"index\.as_retriever\(\) or index\.as_query_engine"):
        rag_from_object(qdrant_stores.llamaindex_index, name="index")


def test_a_chain_taking_an_input_object_and_returning_a_mapping(qdrant_stores: Stores) -> None:
    """The shape of ``create_retrieval_chain``: ``{"input": q}`` in, ``{"answer", ...}`` out."""
    from operator import itemgetter

    retriever = qdrant_stores.langchain_store.as_retriever()

    def answer(value: dict[str, Any]) -> dict[str, Any]:
        ids = [d.metadata["doc_id"] for d in value["context"]]
        return {"input": value["input"], "context": value["context"], "answer": ",".join(ids)}

    chain = RunnablePassthrough.assign(context=itemgetter("input") | retriever) | RunnableLambda(
        answer
    )
    check_answers_follow_k(swept(qdrant_stores, chain))
