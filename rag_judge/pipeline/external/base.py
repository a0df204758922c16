"""Bring your own RAG: the passages and retrievals a user's system gives, and two of its forms
(a Python callable and a JSONL file of precomputed retrievals; an endpoint is
:mod:`rag_judge.pipeline.external.http`). :mod:`rag_judge.pipeline.external.load` picks one
from a spec string.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import sys
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol, TypeVar

from rag_judge.core import json_text
from rag_judge.core.errors import InputError, RagJudgeError
from rag_judge.data.eval_sets import EvalQuery
from rag_judge.pipeline.external.where import described

DEFAULT_TIMEOUT: Final = 60.0
"""Seconds one HTTP request to an external RAG may take."""
DEFAULT_CONCURRENCY: Final = 8
"""Questions asked of an async callable or an endpoint at once."""
_SHOWN: Final = 5
T = TypeVar("T")


class ExternalRagError(RagJudgeError):
    """The external RAG failed: an HTTP error status, a timeout, or the callable raised."""


@dataclass(frozen=True)
class Passage:
    """One passage an external RAG retrieved."""

    id: str
    """Unique within one question's ranking."""
    text: str
    """What the generator and judges read."""
    doc_id: str | None = None
    """The eval set's document id, for the ``doc_*`` measures; None when unknown."""


@dataclass(frozen=True)
class Retrieval:
    """One question's top K passages, best first, and the source's own answers if any."""

    passages: tuple[Passage, ...]
    answers: Mapping[int, str] = field(default_factory=dict)
    """The source's answer for every k of the sweep, or empty: the sweep generates them."""


class ExternalRag(Protocol):
    """A user's RAG as the sweep sees it."""

    name: str
    """Where it comes from, for messages (``callable mod:fn``, a file, a URL)."""

    async def retrieve(
        self, queries: Sequence[EvalQuery], k: int, ks: Sequence[int]
    ) -> list[Retrieval]:
        """The top ``k`` (= K) for each query, in query order; answers cover every k of ``ks``."""
        ...


def to_passages(
    items: object, *, question_id: str, k: int, source: str, line: int | None = None
) -> tuple[Passage, ...]:
    """The first ``k`` of a source's contexts as passages, checked.

    Raises:
        InputError: not a list, an item of the wrong shape, or an id repeated.
    """
    where: dict[str, Any] = {"source": source, "line": line}
    if line is None:
        where["row"] = question_id
    if isinstance(items, str | bytes | Mapping) or not isinstance(items, Sequence):
        kind = type(items).__name__
        raise InputError(f"must be a list of passages, got {kind}", field="contexts", **where)
    passages: list[Passage] = []
    for rank, item in enumerate(items[:k], start=1):
        passage = _passage(item, f"{question_id}#{rank}", f"contexts[{rank - 1}]", where)
        if any(p.id == passage.id for p in passages):
            raise InputError(
                f"passage id {passage.id!r} appears twice", field=f"contexts[{rank - 1}]", **where
            )
        passages.append(passage)
    return tuple(passages)


def _passage(item: object, default_id: str, name: str, where: dict[str, Any]) -> Passage:
    if isinstance(item, Passage):
        return item
    if isinstance(item, str):
        return Passage(default_id, item)
    if not isinstance(item, Mapping):
        raise InputError(
            f"a passage is a string or an object with 'text', got {type(item).__name__}",
            field=name,
            **where,
        )
    text = item.get("text")
    if not isinstance(text, str):
        raise InputError("must be a string", field=f"{name}.text", **where)
    ids = [item.get(key) for key in ("id", "doc_id")]
    for key, value in zip(("id", "doc_id"), ids, strict=True):
        if value is not None and (isinstance(value, bool) or not isinstance(value, str | int)):
            raise InputError("must be a string", field=f"{name}.{key}", **where)
    passage_id, doc_id = (None if v is None else str(v) for v in ids)
    return Passage(passage_id or default_id, text, doc_id)


def answer_text(value: object, **where: Any) -> str:
    """An answer from the source, stripped; a non-string is an InputError naming where."""
    if not isinstance(value, str):
        raise InputError(f"must be a string, got {type(value).__name__}", **where)
    return value.strip()


class CallableRag:
    """A Python callable ``fn(question, k)`` returning passages (sync or async)."""

    def __init__(
        self,
        fn: Callable[[str, int], Any],
        *,
        name: str | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
    ) -> None:
        self.fn = fn
        self.name = name or f"callable {getattr(fn, '__qualname__', repr(fn))}"
        self.concurrency = concurrency

    async def retrieve(
        self, queries: Sequence[EvalQuery], k: int, ks: Sequence[int]
    ) -> list[Retrieval]:
        """Call the function once per question with ``k``; sync ones serially in a thread."""
        if not _is_async(self.fn):
            return [await self._one(q, k, asyncio.to_thread) for q in queries]
        gate = asyncio.Semaphore(self.concurrency)

        async def limited(query: EvalQuery) -> Retrieval:
            async with gate:
                return await self._one(query, k, _call_inline)

        return await run_all(limited(q) for q in queries)

    async def _one(self, query: EvalQuery, k: int, run: Callable[..., Awaitable[Any]]) -> Retrieval:
        try:
            result = await run(self.fn, query.question, k)
            if inspect.isawaitable(result):
                result = await result
        except RagJudgeError:
            raise
        except Exception as error:  # the user's code: any failure, named by question
            raise ExternalRagError(
                f"{self.name} failed on question {query.id!r}: {described(error)}"
            ) from error
        except SystemExit as stop:  # sys.exit() in the user's code must not end the sweep as done
            raise ExternalRagError(
                f"{self.name} called sys.exit({stop.code!r}) on question {query.id!r}; a RAG "
                "under test must return its passages (or raise), not exit"
            ) from None
        return Retrieval(to_passages(result, question_id=query.id, k=k, source=self.name))


async def run_all(coroutines: Iterable[Coroutine[Any, Any, T]]) -> list[T]:
    """Every result in order; on the first error the rest are cancelled, then it is raised."""
    tasks = [asyncio.ensure_future(c) for c in coroutines]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def _is_async(fn: object) -> bool:
    # An object whose class defines ``async def __call__`` counts too.
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)


async def _call_inline(fn: Callable[..., Any], *args: Any) -> Any:
    return fn(*args)


@dataclass(frozen=True)
class _Line:
    number: int
    contexts: list[Any]
    answers: dict[int, str] | None


class JsonlRag:
    """Precomputed retrievals (and optionally answers per k), one JSON line per question."""

    def __init__(self, path: str | Path) -> None:
        """Read and check the whole file now, so a bad line fails before any model call.

        Raises:
            InputError: no such file, or a malformed line (naming file:line and field).
        """
        self.path = Path(path).expanduser()
        self.name = str(self.path)
        if not self.path.is_file():
            raise InputError("no such file", source=self.name)
        self.lines: dict[str, _Line] = {}
        with self.path.open(encoding="utf-8") as handle:
            for number, raw in enumerate(handle, start=1):
                if raw.strip():
                    self._add(number, raw)

    def _add(self, number: int, raw: str) -> None:
        where: dict[str, Any] = {"source": self.name, "line": number}
        try:
            record = json_text.loads(raw)
        except json.JSONDecodeError as error:
            raise InputError(f"not valid JSON ({error.msg})", **where) from error
        if not isinstance(record, dict):
            raise InputError("must be a JSON object", **where)
        qid = record.get("question_id")
        if isinstance(qid, bool) or not isinstance(qid, str | int):
            raise InputError("must be a string", field="question_id", **where)
        if str(qid) in self.lines:
            first = self.lines[str(qid)].number
            raise InputError(f"question {qid!r} already on line {first}", **where)
        contexts = record.get("contexts")
        to_passages(contexts, question_id=str(qid), k=sys.maxsize, source=self.name, line=number)
        answers = record.get("answers")
        if answers is not None and not isinstance(answers, dict):
            raise InputError('must be an object {"1": answer, ...}', field="answers", **where)
        by_k: dict[int, str] | None = None
        if answers is not None:
            by_k = {}
            for key, value in answers.items():
                if not re.fullmatch(r"[1-9]\d*", key):
                    raise InputError(f"key {key!r} is not a k >= 1", field="answers", **where)
                by_k[int(key)] = answer_text(value, field=f"answers.{key}", **where)
        self.lines[str(qid)] = _Line(number, list(contexts), by_k)  # type: ignore[arg-type]

    async def retrieve(
        self, queries: Sequence[EvalQuery], k: int, ks: Sequence[int]
    ) -> list[Retrieval]:
        """Each question's line: its first ``k`` contexts, and its answers for ``ks`` if any.

        Raises:
            InputError: a question of the eval set has no line, or a line's answers miss a k.
        """
        if missing := [q.id for q in queries if q.id not in self.lines]:
            shown = ", ".join(map(repr, missing[:_SHOWN]))
            shown += ", ..." if len(missing) > _SHOWN else ""
            raise InputError(
                f"{len(missing)} of {len(queries)} questions of the eval set have no line: {shown}",
                source=self.name,
            )
        out = []
        for query in queries:
            line = self.lines[query.id]
            passages = to_passages(
                line.contexts, question_id=query.id, k=k, source=self.name, line=line.number
            )
            answers: dict[int, str] = {}
            if line.answers is not None:
                if lacking := [n for n in ks if n not in line.answers]:
                    raise InputError(
                        f"no answer for k={lacking[0]} (the sweep needs k = "
                        f"{', '.join(map(str, ks))})",
                        source=self.name,
                        line=line.number,
                        field="answers",
                    )
                answers = {n: line.answers[n] for n in ks}
            out.append(Retrieval(passages, answers))
        return out
