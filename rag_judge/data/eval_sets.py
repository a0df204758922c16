"""Retrieval eval sets: a corpus, questions (with reference answers if any) and qrels.

A set is a folder ``<name>/`` with five files, the same for every set:

- ``corpus.jsonl``: one document per line: ``doc_id``, ``title`` (may be empty), ``text``.
- ``queries.jsonl``: one question per line: ``query_id``, ``question``, ``answers`` (reference
  answer strings; ``[]`` when the set has none), ``type`` (a question-type label for
  breakdowns), optional ``answerable`` (``false`` marks a question the corpus cannot answer,
  where "I don't know" is the right reply; its ``answers`` must be ``[]``), and optional extra
  fields, kept in :attr:`EvalQuery.extra`.
- ``qrels.tsv``: ``query_id<TAB>doc_id<TAB>relevance`` after a header line; graded where the
  source is graded (>= 1 relevant, 0 or less judged not relevant).
- ``manifest.json``: ``name``, ``description``, ``source``, ``licence``, ``language``,
  ``has_reference_answers``, ``not_applicable`` (``[{"metric", "reason"}]``: judges and
  metrics that cannot run on the set), ``counts`` and ``files`` (``{name: {sha256, fields}}``);
  optional ``reference_answers`` (``spans`` or ``free_text``; measured when absent:
  :attr:`EvalSet.reference_kind`).
- ``LICENSE.md``.

The bundled sets live in ``eval_sets/`` (``rag_judge/_eval_sets`` in a wheel) and are written
by ``eval_sets/build.py``. Loading checks each file against its manifest sha256 and every
line; errors are :class:`~rag_judge.core.errors.InputError` naming the file, line and field.

>>> cmrc = load_eval_set("cmrc2018_zh")
>>> len(cmrc.documents), len(cmrc.queries), cmrc.has_reference_answers
(848, 3219, True)
>>> small = cmrc.limit(2)
>>> [(q.id, q.type, q.answers) for q in small.queries[:1]]
[('DEV_0_QUERY_0', 'which', ('光荣和ω-force',))]
>>> small.qrels
{'DEV_0_QUERY_0': {'DEV_0': 1}, 'DEV_1_QUERY_1': {'DEV_1': 1}}
>>> cmrc.reference_kind  # every reference is a span of its paragraph
'spans'
"""

from __future__ import annotations

import functools
import importlib.resources
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from rag_judge.core.errors import InputError
from rag_judge.core.types import Document
from rag_judge.data.readers import Where, read_jsonl, text_lines
from rag_judge.data.set_folders import (
    bad,
    complete_folders,
    read_manifest,
    resolve_folder,
    unique,
    verify_files,
)

DATA_FILES = ("corpus.jsonl", "queries.jsonl", "qrels.tsv")
ReferenceKind = Literal["spans", "free_text", "none"]
"""What a set's reference answers are (:attr:`EvalSet.reference_kind`)."""
SPAN_SHARE = 0.9
"""The share of answered questions whose answer is a span of a relevant document above which a
set's references are taken as spans."""
"""The files every eval set has besides ``manifest.json`` and ``LICENSE.md``."""
QRELS_HEADER = ("query_id", "doc_id", "relevance")
_MODIFIED = "the file was modified; rebuild with eval_sets/build.py or update the manifest"
_QUERY_FIELDS = frozenset({"query_id", "question", "answers", "type", "answerable"})


@dataclass(frozen=True, slots=True)
class EvalQuery:
    """One question of an eval set."""

    id: str
    question: str
    answers: tuple[str, ...]
    """Reference answers, best first; empty when the set has none."""
    type: str
    """Question-type label for breakdowns (how it was derived: the manifest)."""
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False)
    """Any other fields of the query's line, read-only."""
    answerable: bool = True
    """False when the set marks the question unanswerable from its corpus: a refusal is then
    the right answer and an answer that asserts something is the wrong one."""


@dataclass(frozen=True)
class EvalSet:
    """A loaded eval set: documents, queries, qrels, and what the manifest says about them."""

    name: str
    path: Path
    manifest: Mapping[str, Any]
    documents: tuple[Document, ...]
    queries: tuple[EvalQuery, ...]
    qrels: dict[str, dict[str, int]]
    """``{query_id: {doc_id: grade}}``, only for queries in :attr:`queries`."""
    has_reference_answers: bool
    not_applicable: Mapping[str, str]
    """Judges and metrics that cannot run on this set, with the reason."""
    warnings: tuple[str, ...] = ()
    """Problems that do not stop loading (queries without relevant documents, empty texts)."""

    @functools.cached_property
    def reference_kind(self) -> ReferenceKind:
        """What the reference answers are: ``spans`` (copied from the question's relevant
        documents, as in extractive QA: CMRC 2018, SQuAD), ``free_text`` (written answers), or
        ``none``. The manifest's ``reference_answers`` says it when given; else it is measured:
        spans when at least :data:`SPAN_SHARE` of the answered questions with a relevant document
        have an answer that occurs in one of their relevant documents' text word for word."""
        declared = self.manifest.get("reference_answers")
        if declared in ("spans", "free_text"):
            return declared  # type: ignore[no-any-return]
        if not self.has_reference_answers:
            return "none"
        texts = {d.id: f"{d.title or ''}\n{d.text}" for d in self.documents}
        checked = spans = 0
        for query in self.queries:
            relevant = [d for d, grade in self.qrels.get(query.id, {}).items() if grade >= 1]
            if not query.answers or not relevant:
                continue
            checked += 1
            spans += any(a in texts.get(d, "") for a in query.answers for d in relevant)
        return "spans" if checked and spans >= SPAN_SHARE * checked else "free_text"

    @property
    def language(self) -> str:
        """The set's language as its manifest gives it (``en`` when it gives none)."""
        language = self.manifest.get("language", "en")
        return language if isinstance(language, str) else "en"

    def limit(self, n: int) -> EvalSet:
        """The first ``n`` queries and their qrels; the corpus is kept whole."""
        if n < 1:
            raise InputError(f"must be at least 1, got {n}", field="limit")
        return self._with_queries(self.queries[:n])

    def only(self, ids: Iterable[str]) -> EvalSet:
        """The queries with these ids, in the set's order, and their qrels (a worker's share of
        a sweep); the corpus is kept whole."""
        wanted = set(ids)
        return self._with_queries(tuple(q for q in self.queries if q.id in wanted))

    def _with_queries(self, queries: tuple[EvalQuery, ...]) -> EvalSet:
        qrels = {q.id: dict(self.qrels[q.id]) for q in queries if q.id in self.qrels}
        warnings = _warnings(self.documents, queries, qrels, self.has_reference_answers)
        return replace(self, queries=queries, qrels=qrels, warnings=warnings)


def bundled_root() -> Path:
    """The bundled sets: ``rag_judge/_eval_sets`` in a wheel, else ``<repo>/eval_sets``."""
    bundled = importlib.resources.files("rag_judge") / "_eval_sets"
    if isinstance(bundled, Path) and bundled.is_dir():
        return bundled
    return Path(__file__).resolve().parents[2] / "eval_sets"


def available_eval_sets() -> list[str]:
    """Names of the bundled retrieval eval sets (folders with a manifest and the data files)."""
    return complete_folders(bundled_root(), DATA_FILES)


def load_eval_set(name_or_path: str | Path) -> EvalSet:
    """Load a bundled set by name (``"cmrc2018_zh"``) or a set folder by path, checked."""
    folder = _resolve(name_or_path)
    manifest = _read_manifest(folder)
    _verify_files(folder, manifest)
    documents = _read_corpus(folder / "corpus.jsonl")
    queries = _read_queries(folder / "queries.jsonl")
    qrels = _read_qrels(folder / "qrels.tsv", {q.id for q in queries}, {d.id for d in documents})
    has_answers = bool(manifest.get("has_reference_answers", any(q.answers for q in queries)))
    name = manifest.get("name")
    return EvalSet(
        name=name if isinstance(name, str) and name else folder.name,
        path=folder,
        manifest=MappingProxyType(manifest),
        documents=documents,
        queries=queries,
        qrels=qrels,
        has_reference_answers=has_answers,
        not_applicable=_not_applicable(manifest, folder / "manifest.json"),
        warnings=_warnings(documents, queries, qrels, has_answers),
    )


def _resolve(name_or_path: str | Path) -> Path:
    return resolve_folder(
        name_or_path, bundled=bundled_root(), available=available_eval_sets(), kind="eval set"
    )


def _read_manifest(folder: Path) -> dict[str, Any]:
    manifest = read_manifest(folder, kind="eval set")
    if not isinstance(manifest.get("has_reference_answers", False), bool):
        raise bad("must be true or false", folder / "manifest.json", "has_reference_answers")
    return manifest


def _verify_files(folder: Path, manifest: Mapping[str, Any]) -> None:
    """Every data file is listed, and every listed file matches its sha256 (when given)."""
    verify_files(folder, manifest, required=DATA_FILES, modified=_MODIFIED, sha256_required=False)


def _string(row: Mapping[str, Any], key: str, where: Where, *, empty: bool = False) -> str:
    """The string field ``key``; ``empty`` allows an empty (or whitespace) string."""
    value = row.get(key)
    if key not in row:
        raise bad("missing", where, key)
    if not isinstance(value, str):
        raise bad(f"must be a string, got {type(value).__name__}", where, key)
    if not empty and not value.strip():
        raise bad("must not be empty", where, key)
    return value


def _read_corpus(path: Path) -> tuple[Document, ...]:
    seen: dict[str, Where] = {}
    documents = []
    for where, row in read_jsonl(path):
        doc_id = _string(row, "doc_id", where)
        unique(seen, doc_id, where, "doc_id")
        title = _string(row, "title", where, empty=True) if "title" in row else ""
        text = _string(row, "text", where, empty=True)
        documents.append(Document(id=doc_id, text=text, title=title or None))
    return tuple(documents)


def _answers(row: Mapping[str, Any], where: Where) -> tuple[str, ...]:
    answers = row.get("answers")
    if "answers" not in row:
        raise bad("missing (use [] when there is no reference answer)", where, "answers")
    if not isinstance(answers, list) or not all(isinstance(a, str) and a for a in answers):
        raise bad("must be a list of non-empty strings", where, "answers")
    return tuple(answers)


def _answerable(row: Mapping[str, Any], where: Where) -> bool:
    """The optional ``answerable`` flag (default true; false for a row typed ``unanswerable``
    with no answers, as ``rag-judge synth`` wrote them before the flag existed); an unanswerable
    question has no reference answer."""
    legacy = row.get("type") == "unanswerable" and not row.get("answers")
    answerable = row.get("answerable", not legacy)
    if not isinstance(answerable, bool):
        raise bad(f"must be true or false, got {answerable!r}", where, "answerable")
    if not answerable and row.get("answers"):
        raise bad(
            "an unanswerable question (answerable: false) must have answers: []; keep near "
            "misses in another field such as plausible_answers",
            where,
            "answers",
        )
    return answerable


def _read_queries(path: Path) -> tuple[EvalQuery, ...]:
    seen: dict[str, Where] = {}
    queries = []
    for where, row in read_jsonl(path):
        query_id = _string(row, "query_id", where)
        unique(seen, query_id, where, "query_id")
        queries.append(
            EvalQuery(
                id=query_id,
                question=_string(row, "question", where),
                answers=_answers(row, where),
                type=_string(row, "type", where),
                extra=MappingProxyType({k: v for k, v in row.items() if k not in _QUERY_FIELDS}),
                answerable=_answerable(row, where),
            )
        )
    return tuple(queries)


def _read_qrels(path: Path, query_ids: set[str], doc_ids: set[str]) -> dict[str, dict[str, int]]:
    lines = text_lines(path)
    header = next(lines, None)
    if header is None or header[0].line != 1 or tuple(header[1].split("\t")) != QRELS_HEADER:
        first = Where(str(path), 0, line=1)
        raise bad(f"the first line must be the header {'<TAB>'.join(QRELS_HEADER)}", first)
    qrels: dict[str, dict[str, int]] = {}
    for where, line in lines:
        qid, doc, grade = _qrels_line(line, where, query_ids, doc_ids)
        judged = qrels.setdefault(qid, {})
        if doc in judged:
            raise bad(f"document '{doc}' judged twice for query '{qid}'", where, "doc_id")
        judged[doc] = grade
    return qrels


def _qrels_line(
    line: str, where: Where, query_ids: set[str], doc_ids: set[str]
) -> tuple[str, str, int]:
    fields = line.split("\t")
    if len(fields) != len(QRELS_HEADER):
        raise bad(f"expected 3 tab-separated fields, got {len(fields)}", where)
    qid, doc, grade = fields
    if qid not in query_ids:
        raise bad(f"unknown query '{qid}' (not in queries.jsonl)", where, "query_id")
    if doc not in doc_ids:
        raise bad(f"unknown document '{doc}' (not in corpus.jsonl)", where, "doc_id")
    try:
        return qid, doc, int(grade)
    except ValueError:
        raise bad(f"'{grade}' is not an integer", where, "relevance") from None


def _not_applicable(manifest: Mapping[str, Any], path: Path) -> Mapping[str, str]:
    entries = manifest.get("not_applicable", [])
    if not isinstance(entries, list) or not all(
        isinstance(e, dict)
        and isinstance(e.get("metric"), str)
        and isinstance(e.get("reason"), str)
        for e in entries
    ):
        raise bad('expected a list of {"metric": ..., "reason": ...}', path, "not_applicable")
    return MappingProxyType({e["metric"]: e["reason"] for e in entries})


def _warnings(
    documents: tuple[Document, ...],
    queries: tuple[EvalQuery, ...],
    qrels: Mapping[str, Mapping[str, int]],
    has_answers: bool,
) -> tuple[str, ...]:
    """What is allowed but worth knowing: unanswerable queries, empty documents."""
    problems = {
        "queries have no relevant document": [
            q.id for q in queries if not any(g >= 1 for g in qrels.get(q.id, {}).values())
        ],
        "documents have no text": [d.id for d in documents if not d.text.strip()],
        "queries have no reference answer": [
            q.id for q in queries if has_answers and q.answerable and not q.answers
        ],
    }
    return tuple(f"{len(ids)} {what}: {_few(ids)}" for what, ids in problems.items() if ids)


def _few(ids: list[str], shown: int = 5) -> str:
    more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
    return ", ".join(ids[:shown]) + more
