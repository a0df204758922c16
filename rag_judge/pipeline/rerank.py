"""Reranking: re-score a retriever's candidates with an LLM's P(yes) or a local cross-encoder.

A :class:`RerankedRetriever` asks its base retriever for ``max(k, depth)`` candidates per query
and keeps the reranker's top ``k``. Both rerankers order by their own score, ties by chunk id
descending (the project's rule, :func:`rag_judge.pipeline.top_k_hits`):

* :class:`LLMReranker` asks the ``rerank/relevant`` prompt "does this passage help answer the
  question?" once per (query, candidate) and scores by the model's P(yes). Calls go through the
  model client, so they are cached, retried and bounded by its concurrency.
* :class:`CrossEncoderReranker` runs a sentence-transformers ``CrossEncoder`` the user has on
  disk (loaded with ``local_files_only``: nothing is downloaded), off the event loop.
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Protocol

import numpy as np
import numpy.typing as npt

from rag_judge.backends.wrapper.client import ModelClient
from rag_judge.core.errors import InputError
from rag_judge.core.language import detect_language
from rag_judge.pipeline.base import Hit, Reranker, Retriever, check_k, check_queries, top_k_hits
from rag_judge.prompts.templates import load_prompt

RERANK_PROMPT: Final = "rerank/relevant"
"""The yes/no prompt of the LLM reranker."""
DEFAULT_DEPTH: Final = 20
"""Candidates a :class:`RerankedRetriever` asks its base for (at least the k asked for)."""
LLM_SPEC: Final = "llm"


class CrossEncoderModel(Protocol):
    """What the reranker needs of a sentence-transformers ``CrossEncoder``."""

    def predict(self, inputs: list[tuple[str, str]], *, batch_size: int) -> Any:
        """One relevance score per (query, passage) pair; higher is more relevant."""
        ...


def _checked(
    queries: Sequence[str], candidates: Sequence[Sequence[Hit]], k: int
) -> tuple[list[str], int]:
    batch, k = check_queries(queries), check_k(k)
    if len(candidates) != len(batch):
        raise InputError(
            f"{len(batch)} queries but {len(candidates)} candidate lists", field="candidates"
        )
    return batch, k


def _text(chunk_texts: Mapping[str, str], chunk_id: str) -> str:
    text = chunk_texts.get(chunk_id)
    if text is None:
        raise InputError(f"candidate chunk {chunk_id!r} has no text", field="chunk_texts")
    return text


class LLMReranker:
    """Scores each candidate by the model's P(yes) that the passage helps answer the question.

    A call that fails (backend error, timeout) scores ``-(its original rank)``: below every
    P(yes), and in the base retriever's order among failures. Failures are counted in
    :attr:`failures`, never dropped silently.
    """

    def __init__(
        self, client: ModelClient, chunk_texts: Mapping[str, str], *, language: str | None = None
    ) -> None:
        """Rerank with ``client``'s P(yes).

        Args:
            client: The model client (its cache makes a re-run free).
            chunk_texts: ``chunk id -> text`` for every chunk the base retriever can return.
            language: Prompt language; None detects it per query (unknown ones use ``en``).
        """
        self.client = client
        self.chunk_texts = chunk_texts
        self.language = language
        self.failures = 0
        """Candidates whose call failed, over every :meth:`rerank` so far."""
        self.last_prompt_tokens: list[int] = []
        """Per query of the last :meth:`rerank`, the prompt tokens its calls sent (a cached
        reply counts what it cost when it was made): what reranking adds to serving a question."""

    async def rerank(
        self, queries: Sequence[str], candidates: Sequence[Sequence[Hit]], k: int
    ) -> list[list[Hit]]:
        """The top ``k`` of each query's candidates by P(yes), ties by chunk id descending."""
        batch, k = _checked(queries, candidates, k)
        texts = [[_text(self.chunk_texts, h.chunk_id) for h in hits] for hits in candidates]
        gate = asyncio.Semaphore(self.client.policy.concurrency)

        async def score(query: str, passage: str, rank: int) -> float:
            prompt = load_prompt(RERANK_PROMPT, self.language or detect_language(query))
            request = prompt.request(question=query, passage=passage)
            async with gate:
                result = await self.client.yes_probability(request)
            spent[query] = spent.get(query, 0) + result.usage.prompt_tokens
            if result.status != "ok" or result.p_yes is None:
                self.failures += 1
                return -float(rank)
            return result.p_yes

        spent: dict[str, int] = {}
        scored = await asyncio.gather(
            *(
                asyncio.gather(*(score(q, p, r) for r, p in enumerate(passages, start=1)))
                for q, passages in zip(batch, texts, strict=True)
            )
        )
        self.last_prompt_tokens = [spent.get(q, 0) for q in batch]
        return [
            top_k_hits([h.chunk_id for h in hits], np.array(values, dtype=np.float64), k)
            for hits, values in zip(candidates, scored, strict=True)
        ]


def _load_cross_encoder(path: Path) -> CrossEncoderModel:
    """A sentence-transformers CrossEncoder from a local directory, on the CPU, offline."""
    from sentence_transformers import CrossEncoder

    try:
        model: CrossEncoderModel = CrossEncoder(
            str(path), device="cpu", local_files_only=True, trust_remote_code=False
        )
    except Exception as error:  # a bad directory fails in many ways inside transformers
        raise InputError(
            f"could not load a cross-encoder from {path}: {error}", field="rerank"
        ) from error
    return model


class CrossEncoderReranker:
    """Scores (query, passage) pairs with a user-supplied cross-encoder on local disk."""

    def __init__(
        self,
        path: str | Path,
        chunk_texts: Mapping[str, str],
        *,
        batch_size: int = 32,
        loader: Callable[[Path], CrossEncoderModel] | None = None,
    ) -> None:
        """Rerank with the cross-encoder at ``path``, loaded on first use.

        Args:
            path: A sentence-transformers CrossEncoder directory (never downloaded).
            chunk_texts: ``chunk id -> text`` for every chunk the base retriever can return.
            batch_size: Pairs per forward pass.
            loader: Builds the model from the path (tests inject a fake); default
                sentence-transformers on the CPU with ``local_files_only``.

        Raises:
            InputError: the path does not exist, or sentence-transformers is not installed.
        """
        self.path = Path(path).expanduser()
        if not self.path.exists():
            raise InputError(f"no cross-encoder at {self.path}: no such path", field="rerank")
        if loader is None and importlib.util.find_spec("sentence_transformers") is None:
            raise InputError(
                "the cross-encoder reranker needs sentence-transformers: "
                "pip install 'rag-judge[embeddings]'",
                field="rerank",
            )
        self.chunk_texts = chunk_texts
        self.batch_size = check_k(batch_size, "batch_size")
        self._loader = loader or _load_cross_encoder
        self._model: CrossEncoderModel | None = None

    async def rerank(
        self, queries: Sequence[str], candidates: Sequence[Sequence[Hit]], k: int
    ) -> list[list[Hit]]:
        """The top ``k`` of each query's candidates by the cross-encoder's score."""
        batch, k = _checked(queries, candidates, k)
        pairs = [
            (q, _text(self.chunk_texts, h.chunk_id))
            for q, hits in zip(batch, candidates, strict=True)
            for h in hits
        ]
        scores = await asyncio.to_thread(self._predict, pairs) if pairs else np.zeros(0)
        out: list[list[Hit]] = []
        start = 0
        for hits in candidates:
            ids = [h.chunk_id for h in hits]
            out.append(top_k_hits(ids, scores[start : start + len(ids)], k))
            start += len(ids)
        return out

    def _predict(self, pairs: list[tuple[str, str]]) -> npt.NDArray[np.float64]:
        if self._model is None:
            self._model = self._loader(self.path)
        scores = np.asarray(
            self._model.predict(pairs, batch_size=self.batch_size), dtype=np.float64
        ).reshape(-1)
        if len(scores) != len(pairs) or not np.isfinite(scores).all():
            raise InputError(
                f"the cross-encoder at {self.path} must give one finite score per pair "
                f"({len(pairs)} pairs, got {scores.tolist()[:5]}...)",
                field="rerank",
            )
        return scores


class RerankedRetriever:
    """A retriever whose top ``k`` is the reranker's pick among the base's top ``depth``."""

    def __init__(self, base: Retriever, reranker: Reranker, *, depth: int = DEFAULT_DEPTH) -> None:
        self.base = base
        """The first-stage retriever."""
        self.reranker = reranker
        """Re-scores the base's candidates."""
        self.depth = check_k(depth, "depth")
        """Candidates asked of the base per query (at least the k asked for)."""

    async def search(self, queries: Sequence[str], k: int) -> list[list[Hit]]:
        """The reranker's top ``k`` among the base's top ``max(k, depth)``, per query."""
        k, batch = check_k(k), check_queries(queries)
        candidates = await self.base.search(batch, max(k, self.depth))
        return await self.reranker.rerank(batch, candidates, k)

    @property
    def last_prompt_tokens(self) -> list[int]:
        """Per query of the last :meth:`search`, the generator prompt tokens reranking sent
        (none for a cross-encoder, which asks no model)."""
        return list(getattr(self.reranker, "last_prompt_tokens", []))


def check_rerank_spec(spec: str) -> str:
    """``spec`` when it names a reranker (``llm``, or a path that exists): checked where the
    options are read, before any index is built or any model is called.

    Raises:
        InputError: any other spec (the message lists the choices).
    """
    if spec == LLM_SPEC or Path(spec).expanduser().exists():
        return spec
    raise InputError(
        f"unknown reranker {spec!r}: use 'llm' (the model's P(yes)) or the path of a local "
        "sentence-transformers cross-encoder directory (no such path exists)",
        field="rerank",
    )


def reranker_from_spec(
    spec: str, *, client: ModelClient | None, chunk_texts: Mapping[str, str]
) -> Reranker:
    """``"llm"`` for :class:`LLMReranker`, an existing path for :class:`CrossEncoderReranker`.

    Raises:
        InputError: any other spec (the message lists the choices), or ``llm`` without a client.
    """
    if check_rerank_spec(spec) == LLM_SPEC:
        if client is None:
            raise InputError("the llm reranker needs a model client", field="rerank")
        return LLMReranker(client, chunk_texts)
    return CrossEncoderReranker(spec, chunk_texts)
