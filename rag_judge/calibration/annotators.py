"""Two annotators and one judge: how far people agree with each other, beside the judge.

A judge's κ against one person means little without the people's κ against each other: if
two annotators agree at κ 0.5, a judge at 0.45 is about as good as a second person. Labels
are joined by row id; the three κ are computed on the same rows (labelled by both people and
scored by the judge), so they compare like with like.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rag_judge.calibration.agreement import accuracy, cohen_kappa, predict_supported
from rag_judge.calibration.estimate import BootstrapOptions, Estimate
from rag_judge.calibration.judge_scores import JudgeScores
from rag_judge.calibration.labels import HumanLabels
from rag_judge.core.errors import InputError


@dataclass(frozen=True)
class AnnotatorAgreement:
    """People against each other and the judge against each, on the same rows."""

    sources: tuple[str, str]
    n: int
    """Rows labelled by both people and scored by the judge."""
    only_first: int
    """Rows only the first labelled (or the judge did not score)."""
    only_second: int
    between_people: Estimate
    """Cohen's κ between the two annotators."""
    people_accuracy: Estimate
    """Share of rows the two annotators label alike."""
    judge_first: Estimate
    """Cohen's κ between the judge's verdict and the first annotator."""
    judge_second: Estimate


def annotator_agreement(
    judge: JudgeScores,
    first: HumanLabels,
    second: HumanLabels,
    *,
    threshold: float = 0.5,
    bootstrap: BootstrapOptions | None = None,
) -> AnnotatorAgreement:
    """κ between two annotators' binary row labels and κ of the judge against each.

    Raises:
        InputError: labels that are not binary row labels, or no row both labelled and
            scored.
    """
    for labels in (first, second):
        if labels.kind != "binary" or labels.level != "sample":
            raise InputError(
                "inter-annotator agreement takes binary labels per row", source=labels.source
            )
    options = bootstrap or BootstrapOptions(confidence=0.95, n_resamples=2000, seed=0)
    a = {label.id: label.value for label in first.labels}
    b = {label.id: label.value for label in second.labels}
    scored = {row.id: row.value for row in judge.rows if row.value is not None}
    common = [i for i in a if i in b and i in scored]
    if not common:
        raise InputError(
            f"no row is labelled in both {first.source} and {second.source} and scored by the "
            "judge: the files must share row ids",
            field="id",
        )
    h1 = np.array([a[i] for i in common])
    h2 = np.array([b[i] for i in common])
    verdicts = predict_supported(np.array([scored[i] for i in common]), threshold)
    categories = (0.0, 1.0)
    return AnnotatorAgreement(
        sources=(first.source, second.source),
        n=len(common),
        only_first=len(a) - len(common),
        only_second=len(b) - len(common),
        between_people=cohen_kappa(h1, h2, categories=categories, **options),
        people_accuracy=accuracy(h1, h2, **options),
        judge_first=cohen_kappa(h1, verdicts, categories=categories, **options),
        judge_second=cohen_kappa(h2, verdicts, categories=categories, **options),
    )


def agreement_lines(found: AnnotatorAgreement) -> list[str]:
    """The three κ in sentences, with the rows they rest on."""
    first, second = found.sources
    return [
        f"Two annotators on {found.n} rows both labelled and judged ({found.only_first} only in "
        f"{first}, {found.only_second} only in {second}):",
        f"  κ between the people: {found.between_people} (they agree on {found.people_accuracy})",
        f"  κ judge vs {first}: {found.judge_first}",
        f"  κ judge vs {second}: {found.judge_second}",
    ]
