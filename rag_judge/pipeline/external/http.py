"""An external RAG behind an HTTP endpoint (see :mod:`rag_judge.pipeline.external.load`).

``POST {"question": ..., "k": K}`` answers ``{"contexts": [...], "answer": optional}``; aiohttp
(the ``openai`` extra) is imported only when an endpoint is used.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

from rag_judge.core import json_text
from rag_judge.core.errors import InputError
from rag_judge.core.redact import redact_url, redact_urls
from rag_judge.data.eval_sets import EvalQuery
from rag_judge.pipeline.external.base import (
    DEFAULT_CONCURRENCY,
    DEFAULT_TIMEOUT,
    ExternalRagError,
    Passage,
    Retrieval,
    answer_text,
    run_all,
    to_passages,
)


class HttpRag:
    """An endpoint: ``POST {"question", "k"}`` -> ``{"contexts": [...], "answer": optional}``."""

    def __init__(
        self,
        url: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        concurrency: int = DEFAULT_CONCURRENCY,
    ) -> None:
        self.url = url
        self.name = redact_url(url)
        """The URL as shown (reports, errors): without a password or token in it."""
        self.timeout = timeout
        self.concurrency = concurrency

    async def retrieve(
        self, queries: Sequence[EvalQuery], k: int, ks: Sequence[int]
    ) -> list[Retrieval]:
        """Ask for each question's top ``k``; if it answers, ask for every other k too.

        Raises:
            ExternalRagError: an HTTP error status, a timeout, or the endpoint is unreachable.
            InputError: aiohttp is missing, a reply is malformed, or a top k is not the first
                k of the top K (each k's answer is judged against the top K's first k).
        """
        try:
            import aiohttp
        except ImportError as error:
            raise InputError(
                "an HTTP RAG endpoint needs aiohttp: pip install 'rag-judge[openai]'"
            ) from error
        gate = asyncio.Semaphore(self.concurrency)
        limits = aiohttp.ClientTimeout(total=self.timeout)
        async with aiohttp.ClientSession(timeout=limits) as session:

            async def one(query: EvalQuery) -> Retrieval:
                async with gate:
                    return await self._question(session, query, k, ks)

            return await run_all(one(q) for q in queries)

    async def _question(
        self, session: Any, query: EvalQuery, k: int, ks: Sequence[int]
    ) -> Retrieval:
        top, answer = await self._post(session, query, k)
        if answer is None:
            return Retrieval(top)
        answers = {k: answer}
        for n in (n for n in ks if n != k):
            passages, answers_n = await self._post(session, query, n)
            if answers_n is None:
                raise InputError(
                    f"answered for k={k} but not k={n}", source=self.name, row=query.id
                )
            if [p.text for p in passages] != [p.text for p in top[:n]]:
                raise InputError(
                    f"its top {n} is not the first {n} of its top {k}; the sweep judges each "
                    f"k's answer against the first k of the top {k}",
                    source=self.name,
                    row=query.id,
                )
            answers[n] = answers_n
        return Retrieval(top, answers)

    async def _post(
        self, session: Any, query: EvalQuery, k: int
    ) -> tuple[tuple[Passage, ...], str | None]:
        import aiohttp

        where: dict[str, Any] = {"source": self.name, "row": query.id}
        try:
            async with session.post(self.url, json={"question": query.question, "k": k}) as reply:
                body = await reply.read()
                if not 200 <= reply.status < 300:
                    excerpt = body[:200].decode("utf-8", errors="replace")
                    raise ExternalRagError(
                        f"{self.name} answered HTTP {reply.status} for question {query.id!r} "
                        f"(k={k}): {excerpt}"
                    )
        except TimeoutError:
            raise ExternalRagError(
                f"{self.name} gave no reply within {self.timeout:g} s (question {query.id!r})"
            ) from None
        except aiohttp.ClientError as error:
            raise ExternalRagError(
                f"{self.name} is unreachable: {redact_urls(str(error))}"
            ) from None
        try:
            data = json_text.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise InputError(f"the reply is not JSON: {body[:80]!r}", **where) from error
        if not isinstance(data, dict):
            raise InputError("the reply must be a JSON object with 'contexts'", **where)
        passages = to_passages(data.get("contexts"), question_id=query.id, k=k, source=self.name)
        answer = data.get("answer")
        return passages, None if answer is None else answer_text(answer, field="answer", **where)
