"""Measures as values: ``parse_measure("ndcg@10")`` gives a hashable, comparable object.

Canonical names are ``family`` or ``family@k``; trec_eval spellings (``P_10``, ``P.10``,
``success_5``, ``ndcg_cut_10``, ``map_cut_100``, ``recip_rank``, ``Rprec``, ``set_F``) are
accepted as aliases and always printed back in canonical form. nDCG accepts a custom
grade-to-gain map in brackets: ``ndcg[1=3,2=9,4=4.5]@10`` (unlisted grades keep gain = grade,
as in trec_eval's ``-m ndcg.1=3,2=9,4=4.5``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from rag_judge.core.errors import UnknownMeasureError

#: family -> (accepts a cutoff, one-line description). The order here is the display order.
FAMILIES: Final[dict[str, tuple[bool, str]]] = {
    "precision": (True, "relevant in top k / k (no k: relevant retrieved / retrieved)"),
    "recall": (True, "relevant in top k / relevant in qrels"),
    "f1": (True, "harmonic mean of precision@k and recall@k (0 when both are 0)"),
    "hit_rate": (True, "1 if any relevant document is in the top k (trec_eval success)"),
    "mrr": (True, "1 / rank of the first relevant document (0 if none in the top k)"),
    "map": (True, "average precision: sum of precision at each relevant rank / relevant"),
    "ndcg": (True, "nDCG, gain = grade (trec_eval, linear), discount 1/log2(rank+1)"),
    "ndcg_exp": (True, "nDCG with gain 2^grade - 1"),
    "rprec": (False, "precision at rank R, R = number of relevant documents"),
    "joint_recall": (True, "1 if every required source is in the top k, else 0"),
    "num_ret": (False, "documents retrieved (after any depth limit)"),
    "num_rel": (False, "relevant documents in the qrels"),
    "num_rel_ret": (False, "relevant documents retrieved"),
}

_ALIASES: Final[dict[str, str]] = {
    "p": "precision",
    "set_p": "precision",
    "set_recall": "recall",
    "set_f": "f1",
    "success": "hit_rate",
    "hit": "hit_rate",
    "recip_rank": "mrr",
    "rr": "mrr",
    "ndcg_cut": "ndcg",
    "map_cut": "map",
    "ap": "map",
    "r-prec": "rprec",
    "r_prec": "rprec",
    "r-precision": "rprec",
}

_PATTERN = re.compile(
    r"""^(?P<family>[A-Za-z][A-Za-z0-9_\-]*?)
        (?:\[(?P<gains>[^\]]*)\])?
        (?:(?:@|_|\.)(?P<k>[+-]?[0-9][0-9.]*))?$""",
    re.VERBOSE,
)


@dataclass(frozen=True, order=True)
class Measure:
    """One retrieval measure: a family, an optional cutoff k and, for nDCG, custom gains."""

    family: str
    """Canonical family name, a key of ``FAMILIES``."""
    cutoff: int | None = None
    """Rank cutoff k (positive), or None for the whole ranking."""
    gains: tuple[tuple[int, float], ...] | None = None
    """For ``ndcg`` only: sorted (grade, gain) pairs overriding gain = grade."""

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise UnknownMeasureError(_unknown_message(self.family))
        takes_cutoff, _ = FAMILIES[self.family]
        if self.cutoff is not None:
            if not takes_cutoff:
                raise UnknownMeasureError(f"measure '{self.family}' takes no cutoff @k")
            if isinstance(self.cutoff, bool) or not isinstance(self.cutoff, int):
                raise UnknownMeasureError(f"cutoff k must be an integer, got {self.cutoff!r}")
            if self.cutoff <= 0:
                raise UnknownMeasureError(
                    f"cutoff k must be a positive integer, got {self.cutoff} in '{self.name}'"
                )
        if self.gains is not None and self.family != "ndcg":
            raise UnknownMeasureError("custom gains [grade=gain,...] apply to 'ndcg' only")

    @property
    def name(self) -> str:
        """Canonical name, e.g. ``ndcg@10`` or ``ndcg[1=3,2=9]@10``."""
        text = self.family
        if self.gains is not None:
            text += "[" + ",".join(f"{g}={_fmt_gain(v)}" for g, v in self.gains) + "]"
        if self.cutoff is not None:
            text += f"@{self.cutoff}"
        return text

    @property
    def is_binary(self) -> bool:
        """True when every per-query value is 0 or 1 (McNemar applies)."""
        return self.family in ("hit_rate", "joint_recall")

    def __str__(self) -> str:
        return self.name


def parse_measure(text: str | Measure) -> Measure:
    """Parse ``"ndcg@10"``, ``"P_5"``, ``"recip_rank"`` ... into a :class:`Measure`.

    Raises:
        UnknownMeasureError: the name is not a known measure, or k is not a positive integer.
    """
    if isinstance(text, Measure):
        return text
    raw = text.strip()
    match = _PATTERN.match(raw)
    if match is None:
        raise UnknownMeasureError(_unknown_message(raw))
    family = _canonical_family(match.group("family"))
    if family is None:
        raise UnknownMeasureError(_unknown_message(raw))
    cutoff = _parse_cutoff(match.group("k"), raw)
    gains = _parse_gains(match.group("gains"), raw) if match.group("gains") is not None else None
    return Measure(family, cutoff, gains)


def parse_measures(texts: Iterable[str | Measure]) -> tuple[Measure, ...]:
    """Parse several measures, dropping exact duplicates but keeping the given order."""
    seen: dict[Measure, None] = {}
    for text in texts:
        seen.setdefault(parse_measure(text), None)
    return tuple(seen)


def _canonical_family(name: str) -> str | None:
    lowered = name.lower()
    if lowered in FAMILIES:
        return lowered
    return _ALIASES.get(lowered)


def _parse_cutoff(text: str | None, raw: str) -> int | None:
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        raise UnknownMeasureError(
            f"cutoff k must be a positive integer, got '{text}' in '{raw}'"
        ) from None
    if value <= 0:
        raise UnknownMeasureError(f"cutoff k must be a positive integer, got {value} in '{raw}'")
    return value


def _parse_gains(text: str, raw: str) -> tuple[tuple[int, float], ...]:
    pairs: dict[int, float] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        grade_text, sep, gain_text = item.partition("=")
        try:
            if not sep:
                raise ValueError
            grade, gain = int(grade_text), float(gain_text)
        except ValueError:
            raise UnknownMeasureError(
                "gains must look like [grade=gain,...] with integer grades, "
                f"got '{item}' in '{raw}'"
            ) from None
        if gain != gain or gain in (float("inf"), float("-inf")):
            raise UnknownMeasureError(f"gain must be a finite number, got '{item}' in '{raw}'")
        pairs[grade] = gain
    if not pairs:
        raise UnknownMeasureError(f"empty gain map in '{raw}'")
    return tuple(sorted(pairs.items()))


def _fmt_gain(value: float) -> str:
    return str(int(value)) if value.is_integer() else repr(value)


def _unknown_message(name: str) -> str:
    known = ", ".join(f"{f}@k" if FAMILIES[f][0] else f for f in FAMILIES)
    return (
        f"unknown measure '{name}'. Known measures: {known} "
        "(trec_eval spellings such as P_10, success_5, ndcg_cut_10, recip_rank also work)"
    )
