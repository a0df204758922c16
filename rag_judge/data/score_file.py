"""The score file: the JSON Lines ``rag-judge score -o`` writes, one sample a line.

This module owns the format: its field names, a record's layout and line, writing the file,
and reading it back. Each line holds the sample's fields (``id``, ``question``, ``answer``,
...), how it was judged (``detected_language``, ``prompt_language``, ``judge_mode``,
``judge_mode_note`` when there is one, ``judge_model``), with ``score --repeats`` every
repeat's value and status (``repeats[metric]``), and ``results[metric]``: a judge result
(``value``, ``status``, ``error``, ``claims``, each claim with ``claim``, ``verdict``,
``reason`` and ``support_probability``, and more that only the full result needs). With ``score
--calibration``, ``calibrated[metric]`` holds the profile's probability and verdict beside the
raw result.

Reading is strict where a number is used (:func:`parse_metric`, :func:`repeat_groups`: an
error names file:line and field) and lenient where a row is only shown (:func:`shown_rows`).
Calibration, compare-scores and the labelling read score files here.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from rag_judge.core.errors import InputError
from rag_judge.core.types import VerdictLabel
from rag_judge.data.readers import Row, Where, numbered_records, read_jsonl

# A row's fields (the sample's own come first, as RagSample has them).
ID = "id"
QUESTION = "question"
ANSWER = "answer"
METADATA = "metadata"
DETECTED_LANGUAGE = "detected_language"
PROMPT_LANGUAGE = "prompt_language"
JUDGE_MODE = "judge_mode"
JUDGE_MODE_NOTE = "judge_mode_note"
JUDGE_MODEL = "judge_model"
REPEATS = "repeats"
RESULTS = "results"
CALIBRATED = "calibrated"
# A judge result (``results[metric]``) and a repeat (``repeats[metric][i]``).
VALUE = "value"
STATUS = "status"
ERROR = "error"
CLAIMS = "claims"
# A claim (``results[metric].claims[i]``).
CLAIM = "claim"
VERDICT = "verdict"
REASON = "reason"
SUPPORT_PROBABILITY = "support_probability"

VERDICTS: tuple[str, ...] = get_args(VerdictLabel)
"""The verdicts a claim may carry (or none)."""

LineWriter = Callable[[Path, Iterable[str]], Path]
"""Writes lines to a file whole or not at all (``rag_judge.runtime.atomic.write_lines``)."""


# --- writing --------------------------------------------------------------------------------


def score_record(
    sample: Mapping[str, Any],
    *,
    metadata: Any,
    language: str,
    prompt_language: str,
    judge_mode: str | None,
    judge_mode_note: str,
    repeats: Mapping[str, Any],
    results: Mapping[str, Any],
    judge_model: str | None = None,
    calibrated: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One sample's record, its fields in file order; each argument already JSON-safe.

    ``judge_mode_note`` appears only when not empty, ``repeats`` only when the row has any,
    ``judge_model`` when known, ``calibrated`` when a profile was applied.
    """
    return {
        **sample,
        METADATA: metadata,
        DETECTED_LANGUAGE: language,
        PROMPT_LANGUAGE: prompt_language,
        JUDGE_MODE: judge_mode,
        **({JUDGE_MODE_NOTE: judge_mode_note} if judge_mode_note else {}),
        **({JUDGE_MODEL: judge_model} if judge_model else {}),
        **({REPEATS: dict(repeats)} if repeats else {}),
        RESULTS: dict(results),
        **({CALIBRATED: dict(calibrated)} if calibrated else {}),
    }


def score_line(record: Mapping[str, Any]) -> str:
    """A record as its line: text as is (not ``\\u`` escapes), never NaN (refused instead)."""
    return json.dumps(record, ensure_ascii=False, allow_nan=False)


def write_score_file(
    path: str | os.PathLike[str], records: Iterable[Mapping[str, Any]], *, write_lines: LineWriter
) -> Path:
    """Write one line per record (UTF-8) through ``write_lines``, the caller's atomic writer
    (``rag_judge.runtime.atomic.write_lines``, a floor above this one): the file is the old
    one or the whole new one, never a part."""
    return write_lines(Path(path), (score_line(record) for record in records))


# --- reading --------------------------------------------------------------------------------


def read_score_rows(path: str | os.PathLike[str]) -> Iterator[Row]:
    """The rows of a score file, each with its line, read as they are iterated.

    Raises:
        InputError: the file is missing, unreadable or not JSON Lines (naming file:line).
    """
    return read_jsonl(path)


def score_rows_from_records(records: Iterable[Mapping[str, Any]], source: str) -> Iterator[Row]:
    """Records in memory (``EvaluationResult.to_records()``) as rows; errors name the row."""
    return numbered_records(records, source)


@dataclass(frozen=True)
class ClaimScore:
    """One claim of a judge result and the judge's verdict on it."""

    index: int
    """0-based position in the result's claims (what claim-level labels refer to)."""
    claim: str
    verdict: str | None
    """``supported``, ``contradicted``, ``not_mentioned``, or None when the judge gave none."""
    support_probability: float | None
    """P(supported) from the model's log-probabilities, when the backend gave them."""


@dataclass(frozen=True)
class JudgeRow:
    """One metric's result on one row."""

    id: str
    status: str
    """``ok``, or why there is no value (``no_claims``, ``parse_error``, ...)."""
    value: float | None
    """The score; None unless ``status`` is ``ok``."""
    error: str | None
    claims: tuple[ClaimScore, ...]
    line: int | None
    """Line in the score file (1-based), or None for records given in memory."""

    @property
    def probability(self) -> float | None:
        """Mean P(supported) over the claims; None if there are none or any lacks one."""
        probabilities = [c.support_probability for c in self.claims]
        if not probabilities or any(p is None for p in probabilities):
            return None
        return math.fsum(p for p in probabilities if p is not None) / len(probabilities)


@dataclass(frozen=True)
class MetricRows:
    """One metric's results, validated, in file order, and the rows that lack it."""

    rows: tuple[JudgeRow, ...]
    not_judged: tuple[str, ...]
    """Ids of rows whose results do not include this metric."""


def parse_metric(numbered: Iterable[Row], source: str, metric: str) -> MetricRows:
    """One metric's result on every row, each checked.

    Raises:
        InputError: Naming file:line (or row) and field, for a missing or repeated id, a
            malformed result, value, status or claim, or when no row has the metric at all.
    """
    rows: list[JudgeRow] = []
    not_judged: list[str] = []
    seen: dict[str, Where] = {}
    metrics_seen: set[str] = set()
    for where, record in numbered:
        id_ = record.get(ID)
        if isinstance(id_, int) and not isinstance(id_, bool):
            id_ = str(id_)
        if not isinstance(id_, str) or not id_:
            raise where.error(f"expected a non-empty string id, got {id_!r}", ID)
        if id_ in seen:
            raise where.error(f"row '{id_}' appears twice (first at {seen[id_]})", ID)
        seen[id_] = where
        results = record.get(RESULTS)
        if not isinstance(results, dict):
            raise where.error("expected an object of judge results by metric", RESULTS)
        metrics_seen.update(results)
        if metric not in results:
            not_judged.append(id_)
            continue
        rows.append(_parse_result(results[metric], id_, where, f"{RESULTS}.{metric}"))
    if not rows:
        found = ", ".join(sorted(metrics_seen)) or "none"
        raise InputError(
            f"no row has results for metric '{metric}' (metrics found: {found})", source=source
        )
    return MetricRows(tuple(rows), tuple(not_judged))


def _parse_result(result: Any, id_: str, where: Where, path: str) -> JudgeRow:
    if not isinstance(result, dict):
        raise where.error("expected a judge result object", path)
    status = result.get(STATUS)
    if not isinstance(status, str) or not status:
        raise where.error(f"expected a status string, got {status!r}", f"{path}.{STATUS}")
    value = result.get(VALUE)
    if value is not None and not _is_finite_number(value):
        raise where.error(f"expected a finite number or null, got {value!r}", f"{path}.{VALUE}")
    if value is not None and not 0.0 <= value <= 1.0:
        raise where.error(
            f"a judge's value lies in [0, 1], got {value!r} (not a rag-judge score?)",
            f"{path}.{VALUE}",
        )
    if (status == "ok") != (value is not None):
        problem = (
            "status 'ok' needs a value" if status == "ok" else f"status '{status}' has a value"
        )
        raise where.error(f"{problem}; a value comes only with status 'ok'", f"{path}.{VALUE}")
    message = result.get(ERROR)
    claims_raw = result.get(CLAIMS) or []
    if not isinstance(claims_raw, list):
        raise where.error("expected a list of claims", f"{path}.{CLAIMS}")
    claims = tuple(
        _parse_claim(claim, index, f"{path}.{CLAIMS}[{index}]", where)
        for index, claim in enumerate(claims_raw)
    )
    return JudgeRow(
        id=id_,
        status=status,
        value=None if value is None else float(value),
        error=message if isinstance(message, str) else None,
        claims=claims,
        line=where.line,
    )


def _parse_claim(claim: Any, index: int, path: str, where: Where) -> ClaimScore:
    if not isinstance(claim, dict) or not isinstance(claim.get(CLAIM), str):
        raise where.error(f"expected a claim object with a '{CLAIM}' string", path)
    verdict = claim.get(VERDICT)
    if verdict is not None and verdict not in VERDICTS:
        raise where.error(
            f"unknown verdict {verdict!r} (known: {', '.join(VERDICTS)})", f"{path}.{VERDICT}"
        )
    probability = claim.get(SUPPORT_PROBABILITY)
    if probability is not None and not (_is_finite_number(probability) and 0 <= probability <= 1):
        raise where.error(
            f"expected a probability in [0, 1] or null, got {probability!r}",
            f"{path}.{SUPPORT_PROBABILITY}",
        )
    return ClaimScore(
        index=index,
        claim=claim[CLAIM],
        verdict=verdict,
        support_probability=None if probability is None else float(probability),
    )


def metrics_in(rows: Iterable[Row]) -> tuple[str, ...]:
    """Every metric some row has results for, in first-seen order (rows without any skipped)."""
    seen: dict[str, None] = {}
    for _, record in rows:
        results = record.get(RESULTS)
        if isinstance(results, dict):
            seen.update(dict.fromkeys(results))
    return tuple(seen)


def repeat_groups(rows: Iterable[Row], metric: str) -> dict[str, list[float]] | None:
    """Row id → the scored values of its repeats (``score --repeats``); None when the file
    was judged once.

    Raises:
        InputError: a malformed ``repeats`` entry (naming the line and field).
    """
    groups: dict[str, list[float]] = {}
    for where, record in rows:
        repeats = record.get(REPEATS)
        if repeats is None:
            return None
        found = repeats.get(metric) if isinstance(repeats, dict) else None
        if not isinstance(found, list):
            raise where.error("expected a list of repeats", f"{REPEATS}.{metric}")
        values = []
        for i, entry in enumerate(found):
            value = entry.get(VALUE) if isinstance(entry, dict) else "?"
            if value is not None and not (
                isinstance(value, int | float) and not isinstance(value, bool)
            ):
                raise where.error(
                    f"expected a number or null, got {value!r}", f"{REPEATS}.{metric}[{i}].{VALUE}"
                )
            if value is not None:
                values.append(float(value))
        groups[str(record.get(ID))] = values
    return groups


def field_texts(rows: Iterable[Row], field: str) -> dict[str, str]:
    """Row id → the row's ``field`` text (or "" when it has none), for reports."""
    out = {}
    for _, record in rows:
        text = record.get(field)
        out[str(record.get(ID))] = text if isinstance(text, str) else ""
    return out


@dataclass(frozen=True)
class ShownClaim:
    """One claim as shown to a reader; a field missing or of the wrong type is empty."""

    claim: str
    verdict: str | None
    reason: str
    probability: float | None


@dataclass(frozen=True)
class ShownRow:
    """What the judge saw and said for one row, to show beside a label (lenient, as above)."""

    id: str
    question: str
    answer: str
    status: str
    error: str
    claims: tuple[ShownClaim, ...]


def shown_rows(records: Iterable[Mapping[str, Any]], metric: str) -> Iterator[ShownRow]:
    """Each record that has an id and a ``metric`` result, leniently: the scores themselves are
    checked by :func:`parse_metric`, this only shows them."""
    for record in records:
        results = record.get(RESULTS)
        result = results.get(metric) if isinstance(results, dict) else None
        if record.get(ID) is None or not isinstance(result, dict):
            continue
        claims = result.get(CLAIMS)
        yield ShownRow(
            id=str(record[ID]),
            question=_text(record.get(QUESTION)),
            answer=_text(record.get(ANSWER)),
            status=_text(result.get(STATUS)),
            error=_text(result.get(ERROR)),
            claims=tuple(
                ShownClaim(
                    claim=_text(c.get(CLAIM)),
                    verdict=c.get(VERDICT) if isinstance(c.get(VERDICT), str) else None,
                    reason=_text(c.get(REASON)),
                    probability=_probability(c.get(SUPPORT_PROBABILITY)),
                )
                for c in (claims if isinstance(claims, list) else [])
                if isinstance(c, dict)
            ),
        )


def _is_finite_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _probability(value: Any) -> float | None:
    return float(value) if _is_finite_number(value) else None
