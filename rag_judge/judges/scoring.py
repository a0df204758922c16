"""Pure scoring functions: verdicts in, a score out. No model, no I/O; every line is tested.

A score that cannot be computed (no claims to judge) is ``None``, never NaN and never a silent
0 or 1; the judge turns that into a status.

>>> from rag_judge.core.types import ClaimVerdict
>>> grid = [ClaimVerdict(claim="a", verdict="supported", chunks=(2,)),
...         ClaimVerdict(claim="b", verdict="not_mentioned")]
>>> supported_fraction(grid)
0.5
>>> recall_by_k(grid, 3)
{1: 0.0, 2: 0.5, 3: 0.5}
>>> average_precision([False, True, True])  # (1/2 + 2/3) / 2
0.5833333333333333
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final, Literal

from rag_judge.core.types import ClaimVerdict

NoncommittalPolicy = Literal["zero", "unscored", "ignore"]
"""What answer relevancy does with an evasive answer: score 0, no score, or score as usual."""
Aggregate = Literal["mean", "min", "product"]
"""How the scoring path turns claims' P(supported) into one value."""
SUPPORT_AGGREGATE: Aggregate = "mean"
"""The scoring path's value: the mean P(supported) over claims, i.e. the expected share of
supported claims (chosen by measurement; benchmarks/calibration_local.md)."""


def supported_fraction(verdicts: Sequence[ClaimVerdict]) -> float | None:
    """Share of claims judged ``supported``; None when there are no claims.

    Faithfulness is this over the answer's claims checked against the contexts; completeness
    is this over the reference's claims checked against the answer.
    """
    if not verdicts:
        return None
    return sum(v.verdict == "supported" for v in verdicts) / len(verdicts)


SUPPORT_WEIGHTS: Final = (-1.699, 1.299, 3.557)
"""``(intercept, logit P(yes), coverage)`` of :func:`support_probability`: a logistic
regression fitted on the 221 single-claim tuning rows (WiCE's tuning half and 200 BEGIN rows
outside the 400 the quality figures use) by ``benchmarks/fit_support.py``
(``results/fit_support.json``), for the embedded Qwen2.5-Coder-1.5B and the support prompt
``claims/support@2``; a claim is supported at P >= 0.5."""


UNSTATED_FACT_FACTOR: Final = 0.1
"""P(supported) of a claim stating an exact fact no passage states (a number, by value; a Latin
name in Chinese text) is this share of what the model and the words alone give: below the
decision point (0.5) whatever they say, and still ordered by them."""


FRAGMENT_WEIGHTS: Final = (-1.718, 2.764, 2.026)
"""``(intercept, logit P(yes), coverage)`` for a fragment answer asked with ``claims/answer``
(see :func:`rag_judge.judges.segment.is_fragment`): a logistic regression on the 279 fragment
claims of the tuning half of ``cmrc_short_answers`` (faithfulness and completeness, those no
exact-fact check decides) by ``benchmarks/short_answers_local.py fit``
(``results/short_answers_fit.json``), for the embedded Qwen2.5-Coder-1.5B."""


def support_probability(
    p_model: float, covered: float, *, unstated_fact: bool = False, fragment: bool = False
) -> float:
    """P(supported) of a claim in ``score`` mode: the model's P(yes) and the share of the claim's
    content units the passages contain, combined by :data:`SUPPORT_WEIGHTS`; times
    :data:`UNSTATED_FACT_FACTOR` when the claim states an exact fact no passage does.

    A 1.5B model's yes/no probability ranks claims, but misses the detail a passage lacks (a
    date, a qualifier: WiCE's "partially supported"); the lexical share catches most of those,
    and an exact fact compared as such catches the wrong figure or name that shares most of its
    characters with the right one.
    """
    intercept, weight, lexical = FRAGMENT_WEIGHTS if fragment else SUPPORT_WEIGHTS
    p = min(max(p_model, 1e-6), 1 - 1e-6)
    z = intercept + weight * math.log(p / (1 - p)) + lexical * covered
    combined = 1.0 / (1.0 + math.exp(-z))
    return combined * UNSTATED_FACT_FACTOR if unstated_fact else combined


def support_score(
    verdicts: Sequence[ClaimVerdict], how: Aggregate = SUPPORT_AGGREGATE
) -> float | None:
    """One value from the claims' P(supported): their mean (the expected share of supported
    claims), minimum, or product (P(all supported) if independent); None when there are no
    claims or a claim has no probability.

    >>> grid = [ClaimVerdict(claim="a", support_probability=0.9),
    ...         ClaimVerdict(claim="b", support_probability=0.5)]
    >>> support_score(grid), support_score(grid, "min"), support_score(grid, "product")
    (0.7, 0.5, 0.45)
    """
    probabilities = [v.support_probability for v in verdicts]
    if not probabilities or any(p is None for p in probabilities):
        return None
    values = [float(p) for p in probabilities if p is not None]
    if how == "min":
        return min(values)
    if how == "product":
        return math.prod(values)
    return sum(values) / len(values)


def support_by_k(support: Sequence[Sequence[float]]) -> dict[int, float]:
    """Recall at every k from each claim's P(supported) given the top 1..k (``score`` mode):
    the mean over claims, k = 1..K; empty when there are no claims.

    >>> support_by_k([[0.1, 0.9, 0.9], [0.2, 0.2, 0.7]])
    {1: 0.15, 2: 0.55, 3: 0.8}
    """
    if not support:
        return {}
    k_max = min(len(row) for row in support)
    return {
        k: round(sum(row[k - 1] for row in support) / len(support), 12) for k in range(1, k_max + 1)
    }


def first_supporting_rank(verdict: ClaimVerdict, k_max: int) -> int | None:
    """The smallest k at which the top-k contexts support the claim, or None.

    A claim judged supported without naming a passage is credited only at ``k_max`` (the
    whole set was shown); passage numbers outside 1..k_max are ignored.
    """
    if verdict.verdict != "supported":
        return None
    ranks = [c for c in verdict.chunks if 1 <= c <= k_max]
    return min(ranks) if ranks else k_max


def recall_by_k(verdicts: Sequence[ClaimVerdict], k_max: int) -> dict[int, float]:
    """Context recall at every k ≤ k_max from one (claim × passage) grid over the top k_max.

    Recall@k is the share of reference claims supported by at least one of the top k
    contexts; it can only grow with k. Empty when there are no claims.
    """
    if not verdicts or k_max < 1:
        return {}
    firsts = [first_supporting_rank(v, k_max) for v in verdicts]
    return {
        k: sum(1 for f in firsts if f is not None and f <= k) / len(verdicts)
        for k in range(1, k_max + 1)
    }


def useful_chunks(verdicts: Sequence[ClaimVerdict], k_max: int) -> list[bool]:
    """Per context position 1..k_max: does it support at least one reference claim?"""
    useful = [False] * k_max
    for verdict in verdicts:
        if verdict.verdict == "supported":
            for c in verdict.chunks:
                if 1 <= c <= k_max:
                    useful[c - 1] = True
    return useful


def average_precision(useful: Sequence[bool]) -> float:
    """Rank-aware context precision: mean of precision@i over the useful positions i.

    0 when no context is useful (nothing retrieved helps), which is a real score, not a gap.
    """
    hits, total = 0, 0.0
    for i, flag in enumerate(useful, start=1):
        if flag:
            hits += 1
            total += hits / i
    return total / hits if hits else 0.0


def precision_by_k(useful: Sequence[bool]) -> dict[int, float]:
    """Context precision (average precision) of the top k, for every k."""
    return {k: average_precision(useful[:k]) for k in range(1, len(useful) + 1)}


def answer_relevancy_score(
    similarities: Sequence[float], *, noncommittal: bool, policy: NoncommittalPolicy = "zero"
) -> float | None:
    """Mean cosine of the generated questions to the real one, clamped to [0, 1].

    An evasive answer scores 0 under the default policy (``unscored``: None; ``ignore``:
    scored like any other). None when no question was generated.
    """
    if noncommittal and policy == "zero":
        return 0.0
    if noncommittal and policy == "unscored":
        return None
    if not similarities:
        return None
    mean = sum(similarities) / len(similarities)
    return min(1.0, max(0.0, mean))


def context_utilization(
    in_contexts: Sequence[ClaimVerdict], in_answer: Sequence[ClaimVerdict]
) -> float | None:
    """Of the reference claims the contexts support, the share the answer also states.

    RAGChecker's context utilization: low values mean the generator ignored useful context.
    Both lists are verdicts on the same reference claims, in the same order. None when the
    contexts support no reference claim.
    """
    _same_claims(in_contexts, in_answer)
    available = [b for a, b in zip(in_contexts, in_answer, strict=True) if a.verdict == "supported"]
    return supported_fraction(available)


def noise_sensitivity(
    vs_contexts: Sequence[ClaimVerdict], vs_reference: Sequence[ClaimVerdict]
) -> float | None:
    """Share of the answer's claims that are wrong yet supported by a retrieved context.

    RAGChecker's noise sensitivity: the generator repeated a misleading chunk. "Wrong" means
    the reference does not support the claim. Lower is better. None when there are no claims.
    """
    _same_claims(vs_contexts, vs_reference)
    if not vs_contexts:
        return None
    misled = sum(
        a.verdict == "supported" and b.verdict != "supported"
        for a, b in zip(vs_contexts, vs_reference, strict=True)
    )
    return misled / len(vs_contexts)


def _same_claims(a: Sequence[ClaimVerdict], b: Sequence[ClaimVerdict]) -> None:
    if [v.claim for v in a] != [v.claim for v in b]:
        raise ValueError("the two verdict lists must be about the same claims, in order")
