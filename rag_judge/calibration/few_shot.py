"""Few-shot alignment: the rows where the judge and a person disagreed, as worked examples.

:func:`choose_examples` follows one rule: from the labelled rows whose judge result has
exactly one claim (a row-level label is then that claim's label; WiCE and BEGIN rows mostly
have one) and whose thresholded verdict (supported iff value >= 0.5) disagrees with the
person, take ``per_label`` rows of each human label (balanced), preferring the shortest
evidence excerpt, ties by id. The excerpt is the passage sentences sharing the most words
with the claim, at most ``max_words`` words, so each example stays cheap.

One fixed set of examples serves a whole run (or a whole cross-validation fold), never one
set per row: the examples then form the same prompt prefix on every call, which the
in-process model's KV cache reads once and reuses; examples chosen per row would be re-read
on every call. The judge puts them before the passages as earlier turns of the conversation
(:mod:`rag_judge.judges.few_shot`) and records :func:`few_shot_id` among each result's
prompts, so a run with examples is never mistaken for one without.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final, Literal, get_args

from rag_judge.calibration.judge_scores import JudgeScores
from rag_judge.calibration.labels import HumanLabels
from rag_judge.core.errors import InputError
from rag_judge.data.readers import read_jsonl

ExampleVerdict = Literal["supported", "unsupported"]
"""The person's verdict on an example's claim."""

DISAGREE_AT: Final = 0.5
"""The judge calls a row supported when its value reaches this (as ``calibrate`` does)."""
EXCERPT_WORDS: Final = 60
"""Default cap on an example's evidence excerpt, in words (a Han character counts as one)."""
FIELDS: Final = ("claim", "evidence", "verdict", "source_id")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\n+|(?<=[。！？])")
_WORD = re.compile(r"[\u3400-\u9fff]|[^\W_]+", re.UNICODE)


@dataclass(frozen=True)
class WorkedExample:
    """One claim, the evidence it was checked against and the person's verdict on it."""

    claim: str
    """The claim as the judge split it."""
    evidence: str
    """The passage sentences that bear on the claim (gaps marked ``[…]``)."""
    verdict: ExampleVerdict
    """What the person said: ``supported`` or ``unsupported``."""
    source_id: str
    """The labelled row it comes from (so a fold can keep its own rows out)."""

    def to_record(self) -> dict[str, str]:
        """The example as one JSON Lines record (the examples file's format)."""
        return asdict(self)


def few_shot_id(examples: Sequence[WorkedExample]) -> str:
    """``few_shot#<sha256[:12]>`` of the examples in order: what a result's ``prompts`` list
    records, so a profile or a cache can tell a run with these examples from any other."""
    canonical = json.dumps([e.to_record() for e in examples], ensure_ascii=False, sort_keys=True)
    return f"few_shot#{hashlib.sha256(canonical.encode('utf-8')).hexdigest()[:12]}"


def choose_examples(
    judge_scores: JudgeScores,
    human_labels: HumanLabels,
    contexts: Mapping[str, Sequence[str]],
    *,
    per_label: int = 2,
    exclude_ids: Collection[str] = (),
    max_words: int = EXCERPT_WORDS,
) -> tuple[WorkedExample, ...]:
    """Worked examples from the rows where the judge and the person disagree (the module's
    rule), alternating supported and unsupported; fewer when fewer rows disagree.

    Args:
        judge_scores: One metric's results (:func:`read_judge_scores`).
        human_labels: Binary row-level labels (:func:`read_human_labels`), 1 = supported.
        contexts: Each row's passages by id (a score file's ``contexts``).
        per_label: Examples of each human label.
        exclude_ids: Rows never to use (e.g. the fold being judged).
        max_words: Cap on each evidence excerpt.

    Raises:
        InputError: Labels not binary or not row-level, a bad ``per_label``, or no row to
            choose from (the message says how many rows were looked at).
    """
    if human_labels.kind != "binary" or human_labels.level != "sample":
        raise InputError(
            f"worked examples need binary row-level labels, got {human_labels.kind} "
            f"{human_labels.level}-level ones",
            source=human_labels.source,
        )
    if not isinstance(per_label, int) or per_label < 1:
        raise InputError(f"must be a whole number >= 1, got {per_label!r}", field="per_label")
    pools = _disagreements(judge_scores, human_labels, contexts, set(exclude_ids), max_words)
    if not any(pools.values()):
        raise InputError(
            "no labelled row with one claim where the judge (supported iff value >= "
            f"{DISAGREE_AT}) disagrees with the label: nothing to make examples from",
            source=judge_scores.source,
        )
    chosen = {
        verdict: sorted(pool, key=lambda e: (_word_count(e.evidence), e.source_id))[:per_label]
        for verdict, pool in pools.items()
    }
    ordered: list[WorkedExample] = []
    for i in range(per_label):
        ordered += [chosen[v][i] for v in get_args(ExampleVerdict) if i < len(chosen[v])]
    return tuple(ordered)


def _disagreements(
    judge_scores: JudgeScores,
    human_labels: HumanLabels,
    contexts: Mapping[str, Sequence[str]],
    excluded: set[str],
    max_words: int,
) -> dict[ExampleVerdict, list[WorkedExample]]:
    labels = {h.id: h.value for h in human_labels.labels if h.claim is None}
    pools: dict[ExampleVerdict, list[WorkedExample]] = {v: [] for v in get_args(ExampleVerdict)}
    for row in judge_scores.rows:
        label = labels.get(row.id)
        passages = contexts.get(row.id)
        if label is None or row.value is None or len(row.claims) != 1 or row.id in excluded:
            continue
        if not passages or (row.value >= DISAGREE_AT) == (label >= 0.5):
            continue
        claim = row.claims[0].claim
        verdict: ExampleVerdict = "supported" if label >= 0.5 else "unsupported"
        evidence = excerpt(claim, passages, max_words=max_words)
        pools[verdict].append(WorkedExample(claim, evidence, verdict, row.id))
    return pools


def excerpt(claim: str, passages: Sequence[str], *, max_words: int = EXCERPT_WORDS) -> str:
    """The passage sentences sharing the most words with ``claim`` (best first, then shorter,
    then earlier; none that shares no word but the best), shown in passage order, at most
    ``max_words`` words (the best sentence is cut to fit when it alone is longer); ``[…]``
    marks a gap."""
    wanted = set(_words(claim))
    sentences = [s.strip() for p in passages for s in _SENTENCE_END.split(p) if s.strip()]
    shared = [len(wanted & set(_words(s))) for s in sentences]
    ranked = sorted(range(len(sentences)), key=lambda i: (-shared[i], _word_count(sentences[i]), i))
    kept: list[int] = []
    used = 0
    for i in ranked:
        if kept and not shared[i]:
            break  # the rest share no word with the claim
        size = _word_count(sentences[i])
        if used + size > max_words:
            if not kept:
                return _cut(sentences[i], max_words)
            continue
        kept.append(i)
        used += size
    parts: list[str] = []
    last = -2
    for i in sorted(kept):
        if parts and i != last + 1:
            parts.append("[…]")
        parts.append(sentences[i])
        last = i
    return " ".join(parts)


def read_examples(path: str | os.PathLike[str]) -> tuple[WorkedExample, ...]:
    """The worked examples of a JSON Lines file (one ``{"claim", "evidence", "verdict",
    "source_id"}`` object a line), in file order.

    Raises:
        InputError: Naming file:line and field, for a missing, empty or wrongly typed field,
            an unknown verdict, an unknown key, or a file with no example.
    """
    found = []
    for where, record in read_jsonl(path, allowed=FIELDS):
        found.append(_example(record, where.source, where.line))
    if not found:
        raise InputError("no worked example in the file", source=str(path))
    return tuple(found)


def examples_from_records(
    records: Iterable[Mapping[str, Any]], *, source: str = "records"
) -> tuple[WorkedExample, ...]:
    """Like :func:`read_examples`, for records in memory (errors name the 0-based row)."""
    return tuple(_example(dict(r), source, None, row=i) for i, r in enumerate(records))


def write_examples(path: str | os.PathLike[str], examples: Sequence[WorkedExample]) -> None:
    """Write the examples as JSON Lines, one a line (what ``--few-shot`` reads)."""
    lines = [json.dumps(e.to_record(), ensure_ascii=False) for e in examples]
    Path(path).write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def _example(
    record: dict[str, Any], source: str, line: int | None, *, row: int | None = None
) -> WorkedExample:
    values = []
    for name in FIELDS:
        value = record.get(name)
        if not isinstance(value, str) or not value.strip():
            raise InputError(
                f"must be a non-empty string, got {value!r}",
                source=source,
                line=line,
                field=name,
                row=row,
            )
        values.append(value)
    claim, evidence, verdict, source_id = values
    if verdict not in get_args(ExampleVerdict):
        raise InputError(
            f"must be 'supported' or 'unsupported', got {verdict!r}",
            source=source,
            line=line,
            field="verdict",
            row=row,
        )
    return WorkedExample(claim, evidence, verdict, source_id)  # type: ignore[arg-type]


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _word_count(text: str) -> int:
    return len(_WORD.findall(text))


def _cut(sentence: str, max_words: int) -> str:
    """The first ``max_words`` words of ``sentence`` (its own spacing kept), then ``…``."""
    found = list(_WORD.finditer(sentence))
    if len(found) <= max_words:
        return sentence
    return sentence[: found[max_words - 1].end()] + " …"
