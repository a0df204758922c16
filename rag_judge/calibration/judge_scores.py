"""Judge scores for calibration, read from the JSON Lines that ``rag-judge score`` writes.

Each line is one sample
(:meth:`rag_judge.jobs.score.result.EvaluationResult.write_jsonl`): its ``id`` and
``results[metric]`` with ``value``, ``status``, ``error`` and ``claims`` (each with ``claim``,
``verdict`` and ``support_probability``). For one metric this keeps, per row:

- ``value`` (None unless ``status == "ok"``) and ``status``;
- ``probability``: the mean ``support_probability`` of the row's claims, i.e. the expected
  share of supported claims under the judge's own probabilities; None unless the row has at
  least one claim and every claim carries a probability (e.g. a backend without
  log-probabilities gives none);
- the claims themselves, for claim-level labels.

Rows without this metric are listed in ``not_judged``; nothing is dropped silently.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from rag_judge.core.errors import InputError
from rag_judge.data.readers import Where, numbered_records, read_jsonl

_VERDICTS = ("supported", "contradicted", "not_mentioned")


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
class JudgeScores:
    """One metric's results on every row of a score file, in file order."""

    source: str
    metric: str
    rows: tuple[JudgeRow, ...]
    not_judged: tuple[str, ...]
    """Ids of rows whose results do not include this metric."""

    def by_id(self) -> dict[str, JudgeRow]:
        """The rows keyed by id."""
        return {row.id: row for row in self.rows}

    def values(self) -> dict[str, float | None]:
        """Id → value (None when unscored), e.g. for :func:`pairwise_agreement`."""
        return {row.id: row.value for row in self.rows}


def read_judge_scores(path: str | os.PathLike[str], metric: str) -> JudgeScores:
    """Read one metric's results from a ``rag-judge score`` JSON Lines file.

    Raises:
        InputError: Naming file:line and field, for a missing or repeated id, a malformed
            result, value, status or claim, or when no row has the metric at all.
    """
    return _parse(read_jsonl(path), str(path), metric)


def judge_scores_from_records(
    records: Iterable[Mapping[str, Any]], metric: str, *, source: str = "records"
) -> JudgeScores:
    """Like :func:`read_judge_scores`, for records in memory (``EvaluationResult.to_records()``).

    Raises:
        InputError: As :func:`read_judge_scores`, naming the 0-based row instead of a line.
    """
    return _parse(numbered_records(records, source), source, metric)


def judge_scores_from_rows(
    numbered: Iterable[tuple[Where, dict[str, Any]]], source: str, metric: str
) -> JudgeScores:
    """Like :func:`read_judge_scores`, for rows already read (each with where it came from)."""
    return _parse(iter(numbered), source, metric)


def _parse(
    numbered: Iterator[tuple[Where, dict[str, Any]]], source: str, metric: str
) -> JudgeScores:
    rows: list[JudgeRow] = []
    not_judged: list[str] = []
    seen: dict[str, Where] = {}
    metrics_seen: set[str] = set()
    for where, record in numbered:
        id_ = record.get("id")
        if isinstance(id_, int) and not isinstance(id_, bool):
            id_ = str(id_)
        if not isinstance(id_, str) or not id_:
            raise where.error(f"expected a non-empty string id, got {id_!r}", "id")
        if id_ in seen:
            raise where.error(f"row '{id_}' appears twice (first at {seen[id_]})", "id")
        seen[id_] = where
        results = record.get("results")
        if not isinstance(results, dict):
            raise where.error("expected an object of judge results by metric", "results")
        metrics_seen.update(results)
        if metric not in results:
            not_judged.append(id_)
            continue
        rows.append(_parse_result(results[metric], id_, where, f"results.{metric}"))
    if not rows:
        found = ", ".join(sorted(metrics_seen)) or "none"
        raise InputError(
            f"no row has results for metric '{metric}' (metrics found: {found})", source=source
        )
    return JudgeScores(source, metric, tuple(rows), tuple(not_judged))


def _parse_result(result: Any, id_: str, where: Where, path: str) -> JudgeRow:
    if not isinstance(result, dict):
        raise where.error("expected a judge result object", path)
    status = result.get("status")
    if not isinstance(status, str) or not status:
        raise where.error(f"expected a status string, got {status!r}", f"{path}.status")
    value = result.get("value")
    if value is not None and not _is_finite_number(value):
        raise where.error(f"expected a finite number or null, got {value!r}", f"{path}.value")
    if value is not None and not 0.0 <= value <= 1.0:
        raise where.error(
            f"a judge's value lies in [0, 1], got {value!r} (not a rag-judge score?)",
            f"{path}.value",
        )
    if (status == "ok") != (value is not None):
        problem = (
            "status 'ok' needs a value" if status == "ok" else f"status '{status}' has a value"
        )
        raise where.error(f"{problem}; a value comes only with status 'ok'", f"{path}.value")
    message = result.get("error")
    claims_raw = result.get("claims") or []
    if not isinstance(claims_raw, list):
        raise where.error("expected a list of claims", f"{path}.claims")
    claims = tuple(
        _parse_claim(claim, index, f"{path}.claims[{index}]", where)
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
    if not isinstance(claim, dict) or not isinstance(claim.get("claim"), str):
        raise where.error("expected a claim object with a 'claim' string", path)
    verdict = claim.get("verdict")
    if verdict is not None and verdict not in _VERDICTS:
        raise where.error(
            f"unknown verdict {verdict!r} (known: {', '.join(_VERDICTS)})", f"{path}.verdict"
        )
    probability = claim.get("support_probability")
    if probability is not None and not (_is_finite_number(probability) and 0 <= probability <= 1):
        raise where.error(
            f"expected a probability in [0, 1] or null, got {probability!r}",
            f"{path}.support_probability",
        )
    return ClaimScore(
        index=index,
        claim=claim["claim"],
        verdict=verdict,
        support_probability=None if probability is None else float(probability),
    )


def _is_finite_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
