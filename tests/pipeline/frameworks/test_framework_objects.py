"""Recognising framework objects: by type, from ``module:attr`` and from Python; the id rules;
the extras imported only when used and named when missing."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from langchain_core.documents import Document
from llama_index.core.schema import NodeRelationship, NodeWithScore, RelatedNodeInfo, TextNode

from rag_judge.core.errors import InputError
from rag_judge.pipeline.external.base import CallableRag
from rag_judge.pipeline.external.load import load_external_rag, rag_from_object
from rag_judge.pipeline.frameworks.answering import AnsweringRag
from rag_judge.pipeline.frameworks.detect import LANGCHAIN, LLAMAINDEX, framework_of
from rag_judge.pipeline.frameworks.documents import langchain_passage, llamaindex_passage


@pytest.mark.parametrize(
    ("document", "passage"),
    [
        (Document("t", id="u-1", metadata={"doc_id": "D1", "id": "x"}), ("u-1", "D1")),
        (Document("t", metadata={"id": 7}), (None, "7")),
        (Document("t", id="D2"), ("D2", "D2")),
        (Document("t", metadata={"_id": "qdrant-uuid"}), (None, None)),
        (Document("t", metadata={"doc_id": " "}), (None, None)),
    ],
)
def test_langchain_ids_metadata_first_then_the_documents_own(
    document: Document, passage: tuple[str | None, str | None]
) -> None:
    got = langchain_passage(document)
    assert (got.get("id"), got["doc_id"]) == passage
    assert got["text"] == "t"


def test_llamaindex_ids_metadata_then_the_source_document_never_the_node_id() -> None:
    source = {NodeRelationship.SOURCE: RelatedNodeInfo(node_id="DEV_3")}
    node = TextNode(text="t", id_="n1", relationships=source)
    assert llamaindex_passage(NodeWithScore(node=node, score=0.5)) == {
        "id": "n1",
        "text": "t",
        "doc_id": "DEV_3",
    }
    named = TextNode(text="t", id_="n2", metadata={"doc_id": "D9"}, relationships=source)
    assert llamaindex_passage(named)["doc_id"] == "D9"
    assert llamaindex_passage(TextNode(text="t"))["doc_id"] is None  # a bare UUID node id


def test_framework_objects_are_told_by_their_types_module() -> None:
    assert framework_of(Document("t")) is LANGCHAIN
    assert framework_of(TextNode(text="t")) is LLAMAINDEX
    assert framework_of(len) is None
    assert framework_of("text") is None


SPEC_MODULE = '''
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever


class Fixed(BaseRetriever):
    """A retriever of the user's own: k documents, ids in metadata."""

    k: int = 2

    def _get_relevant_documents(self, query, *, run_manager):
        return [Document(f"{query} {i}", metadata={"doc_id": f"D{i}"}) for i in range(self.k)]


retriever = Fixed()
'''


def test_module_attr_loads_a_langchain_retriever_and_sets_its_k(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    from rag_judge.data.eval_sets import EvalQuery

    (tmp_path / "my_lc_rag.py").write_text(SPEC_MODULE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    rag = load_external_rag("my_lc_rag:retriever")
    assert isinstance(rag, CallableRag)
    assert rag.name == "LangChain retriever my_lc_rag:retriever"
    query = EvalQuery(id="q1", question="q", answers=("a",), type="what")
    [got] = asyncio.run(rag.retrieve([query], 5, [1, 5]))
    assert [p.doc_id for p in got.passages] == ["D0", "D1", "D2", "D3", "D4"]
    assert sys.modules["my_lc_rag"].retriever.k == 2  # restored


def test_a_plain_callable_is_still_a_callable() -> None:
    rag = load_external_rag("os.path:join")
    assert isinstance(rag, CallableRag)
    assert not isinstance(rag, AnsweringRag)


def run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=False
    )


def test_rag_judge_never_imports_a_framework_it_was_not_given() -> None:
    done = run(
        """
        import sys, asyncio
        import rag_judge, rag_judge.jobs.sweep
        from rag_judge.pipeline.external.load import load_external_rag, rag_from_object
        load_external_rag("os.path:join")
        print(sorted(m for m in sys.modules if m.split(".")[0] in
              ("langchain_core", "langchain", "llama_index", "qdrant_client")))
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("blocked", "call", "extra"),
    [
        ("langchain_core", "as_langchain_embeddings", "langchain"),
        ("llama_index", "as_llamaindex_embedding", "llamaindex"),
    ],
)
def test_a_missing_framework_names_the_extra_that_installs_it(
    blocked: str, call: str, extra: str
) -> None:
    done = run(
        f"""
        import sys
        sys.modules[{blocked!r}] = None  # as if not installed
        from rag_judge.core.errors import InputError
        from rag_judge.pipeline.frameworks import embeddings
        try:
            embeddings.{call}("scripted/x")
        except InputError as error:
            print(error)
        """
    )
    assert done.returncode == 0, done.stderr
    assert f"pip install 'rag-judge[{extra}]'" in done.stdout
    assert call in done.stdout


def test_an_object_that_is_nothing_the_sweep_can_use_is_named() -> None:
    with pytest.raises(InputError, match=r"'os:sep' is not callable \(str\)"):
        load_external_rag("os:sep")
    with pytest.raises(InputError, match="a LangChain Document, neither a retriever nor"):
        rag_from_object(Document("t"), name="doc")


def test_our_embedder_as_theirs_gives_our_vectors_sync_async_and_inside_a_loop() -> None:
    import asyncio

    from framework_stores import bigram_client, bigrams

    from rag_judge.pipeline.frameworks.embeddings import (
        as_langchain_embeddings,
        as_llamaindex_embedding,
    )

    client = bigram_client()
    langchain, llamaindex = as_langchain_embeddings(client), as_llamaindex_embedding(client)
    expected = bigrams("广三铁路")
    assert langchain.embed_query("广三铁路") == expected
    assert langchain.embed_documents(["广三铁路", "x"])[0] == expected
    assert llamaindex.get_query_embedding("广三铁路") == expected
    assert llamaindex.get_text_embedding_batch(["广三铁路"]) == [expected]
    assert llamaindex.model_name == "scripted/bigrams"

    async def inside_a_running_loop() -> tuple[list[float], list[float], list[float]]:
        blocking = langchain.embed_query("广三铁路")  # sync call from a coroutine: a worker thread
        return (
            blocking,
            await langchain.aembed_query("广三铁路"),
            await llamaindex.aget_query_embedding("广三铁路"),
        )

    assert asyncio.run(inside_a_running_loop()) == (expected, expected, expected)
