"""LLM-as-judge metrics: each a few typed LLM steps plus a pure scoring function.

``JUDGES`` maps metric names to judges, in the order reports list them; ``DEFAULT_METRICS`` are
the four core ones and the two reference matches (which cost no model call). Every fact about
a judge (what it reads, per k or per question, its embedder, what its verdicts cite, its
label) is on its :class:`Judge`: adding one here is all a new judge needs for ``score``, the
k-sweep, the report and the CLI to use it.
"""

from __future__ import annotations

from rag_judge.core.errors import InputError
from rag_judge.judges.answer_relevancy import ANSWER_RELEVANCY
from rag_judge.judges.base import Judge
from rag_judge.judges.claim_judges import COMPLETENESS, FAITHFULNESS
from rag_judge.judges.context_judges import CONTEXT_PRECISION, CONTEXT_RECALL
from rag_judge.judges.diagnostics import CONTEXT_UTILIZATION, NOISE_SENSITIVITY
from rag_judge.judges.reference_match import ANSWER_F1, EXACT_MATCH
from rag_judge.judges.work import JudgeOptions, SampleWork

JUDGES: dict[str, Judge] = {
    judge.name: judge
    for judge in (
        FAITHFULNESS,
        ANSWER_RELEVANCY,
        COMPLETENESS,
        CONTEXT_RECALL,
        EXACT_MATCH,
        ANSWER_F1,
        CONTEXT_PRECISION,
        CONTEXT_UTILIZATION,
        NOISE_SENSITIVITY,
    )
}
"""Every judge by metric name."""

DEFAULT_METRICS = tuple(name for name, judge in JUDGES.items() if judge.default)
"""The judges run when none are named (those a row lacks the inputs for are skipped)."""
DEFAULT_OBJECTIVE = f"{FAITHFULNESS.name}*{COMPLETENESS.name}"
"""What a k-sweep's best k maximises by default: an answer both grounded and complete."""
SPANS_OBJECTIVE = ANSWER_F1.name
"""What it maximises by default when the references are spans of the documents (extractive
QA): reference F1 (docs/concepts/statistics.md: chosen from the measured decision quality)."""
ANSWER_OBJECTIVES = (
    DEFAULT_OBJECTIVE,
    ANSWER_F1.name,
    EXACT_MATCH.name,
    COMPLETENESS.name,
    FAITHFULNESS.name,
    ANSWER_RELEVANCY.name,
)
"""Answer measures a sweep falls back to, in order, before any retrieval measure."""
DEFAULT_CALIBRATED = FAITHFULNESS.name
"""The judge a calibration checks when neither the user nor the set names one."""
REFERENCE_SUPPORT = FAITHFULNESS.name
"""The judge that checks a synthetic question's reference answer against its source chunks
(``rag-judge synth``): the reference stands in for an answer, the chunks for the contexts."""

__all__ = [
    "ANSWER_OBJECTIVES",
    "DEFAULT_CALIBRATED",
    "DEFAULT_METRICS",
    "DEFAULT_OBJECTIVE",
    "JUDGES",
    "REFERENCE_SUPPORT",
    "SPANS_OBJECTIVE",
    "Judge",
    "JudgeOptions",
    "SampleWork",
    "get_judges",
]


def get_judges(names: list[str] | tuple[str, ...] | None) -> list[Judge]:
    """Judges by name (default: the four core ones); an unknown name lists the known ones."""
    chosen = list(names) if names else list(DEFAULT_METRICS)
    unknown = [n for n in chosen if n not in JUDGES]
    if unknown:
        raise InputError(
            f"unknown metric(s) {', '.join(unknown)}; known: {', '.join(JUDGES)}",
            field="metrics",
        )
    return [JUDGES[n] for n in dict.fromkeys(chosen)]
