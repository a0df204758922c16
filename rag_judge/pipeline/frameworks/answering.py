"""A framework object that answers for itself (a LangChain chain, a LlamaIndex query engine).

It is asked once per k of the sweep, in ascending k, with its retriever told to return k
documents; the documents it answered from are recorded each time. Its top K (the largest k)
are the passages the sweep scores, and every smaller k must have answered from their first k:
otherwise the answer at k would be judged against passages it never read, so that is refused.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rag_judge.core.errors import InputError, RagJudgeError
from rag_judge.data.eval_sets import EvalQuery
from rag_judge.pipeline.external.base import ExternalRagError, Retrieval, answer_text, to_passages
from rag_judge.pipeline.external.where import described

Ask = Callable[[str, int], tuple[object, list[Mapping[str, Any]]]]
"""``ask(question, k)``: the answer and the documents (as passage dicts) it was made from."""


class AnsweringRag:
    """An object that retrieves and answers, swept by asking it once per k."""

    def __init__(self, ask: Ask, *, name: str) -> None:
        self.ask = ask
        self.name = name

    async def retrieve(
        self, queries: Sequence[EvalQuery], k: int, ks: Sequence[int]
    ) -> list[Retrieval]:
        """Each question asked at every k of ``ks`` (one at a time, in a worker thread)."""
        return [await asyncio.to_thread(self._question, query, k, ks) for query in queries]

    def _question(self, query: EvalQuery, k: int, ks: Sequence[int]) -> Retrieval:
        seen: dict[int, list[Mapping[str, Any]]] = {}
        answers: dict[int, str] = {}
        for n in sorted({*ks, k}):
            answer, used = self._ask(query, n)
            answers[n] = answer_text(answer, source=self.name, row=query.id, field=f"answer@{n}")
            seen[n] = used
        top = to_passages(seen[k], question_id=query.id, k=k, source=self.name)
        for n in ks:
            texts = [str(document.get("text")) for document in seen[n]]
            if texts != [p.text for p in top[:n]]:
                raise InputError(
                    f"asked for {n} documents, {self.name} answered from {len(texts)} that are "
                    f"not the first {n} of its top {k}: its retriever must return the top k it "
                    "is asked for (a reranker or filter between them changes what it read)",
                    source=self.name,
                    row=query.id,
                )
        return Retrieval(top, {n: answers[n] for n in ks})

    def _ask(self, query: EvalQuery, k: int) -> tuple[object, list[Mapping[str, Any]]]:
        try:
            return self.ask(query.question, k)
        except RagJudgeError:
            raise
        except Exception as error:  # the user's chain or engine: any failure, named by question
            raise ExternalRagError(
                f"{self.name} failed on question {query.id!r} at k={k}: {described(error)}"
            ) from error
