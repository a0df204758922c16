"""The outcome of a k-sweep: one row per question × k, aggregates per k, and the decision."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from rag_judge.backends.wrapper.ledger import Ledger
from rag_judge.core.types import FAILED_STATUSES, JudgeResult
from rag_judge.jobs.sweep.decision.columns import (
    ANSWER_TOKENS,
    ANSWERABLE,
    COST_COLUMNS,
    ID_COLUMNS,
    REFUSED,
)
from rag_judge.jobs.sweep.decision.objective import DEFAULT, Objective
from rag_judge.jobs.sweep.decision.record import Decision
from rag_judge.jobs.sweep.decision.refusals import REFUSAL_MEASURES, refusal_indicators
from rag_judge.jobs.sweep.plan import SweepPlan
from rag_judge.jobs.sweep.summary import summarise
from rag_judge.judges import JUDGES
from rag_judge.retrieval.by_k import ID_MEASURES, TEXT_MEASURES, Values


@dataclass(frozen=True)
class SweepResult:
    """Per question × k values of every retrieval measure and judge, with what they cost."""

    per_question: pd.DataFrame
    """One row per question and k: ids, ``doc_*`` and ``text_*`` retrieval measures, each
    judge's value (nullable Float64, never NaN) and ``<judge>_status``, the answer, its
    ``generation_status``, ``answer_source`` (``generated`` by our generator or ``external``
    from the user's RAG), ``answer_prompt_tokens`` (the generator's prompt) and
    ``calls``/``prompt_tokens``/``completion_tokens`` (everything the row cost)."""
    ks: tuple[int, ...]
    """The cutoffs, ascending."""
    metrics: tuple[str, ...]
    """The judges that ran."""
    skipped: Mapping[str, str] = field(default_factory=dict)
    """Metrics asked for but not applicable to the eval set (or without an embedder): why."""
    uncovered: Mapping[str, str] = field(default_factory=dict)
    """Questions left out of the ``text_*`` measures (no chunk covers their reference): why."""
    model: str = ""
    """The judge model, ``provider/model``."""
    generator: str = ""
    """The model that answered, ``provider/model`` ("" when unknown: read as ``model``)."""
    ledger: Ledger | None = field(default=None, repr=False)
    """The client's ledger: exact calls, cache hits and tokens of the whole sweep."""
    judgements: Mapping[tuple[str, int], Mapping[str, JudgeResult]] = field(
        default_factory=dict, repr=False
    )
    """Every judge's full result (claims, verdicts, reasons, prompts) per (question id, k)."""
    questions: Mapping[str, str] = field(default_factory=dict, repr=False)
    """The question text per question id."""
    retrieved: Mapping[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    """The top-K chunk ids per question id, best first (the top k are the first k)."""
    passages: Mapping[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    """The top-K passage texts per question id, best first (what the answers were made from)."""
    objective: Objective = DEFAULT
    """What the best k maximises, as asked for (checked before the sweep ran)."""
    judge_mode: str = ""
    """The path the judges took, ``score`` or ``generate`` ("" when not recorded)."""
    judge_mode_note: str = ""
    """Why it is not the path asked for (a server without log-probabilities), or ""."""
    calibrated: tuple[str, ...] = ()
    """Columns of calibrated P(supported) from a profile (``<judge>_calibrated``), if any."""
    decision: Decision | None = None
    """Which k to use and how sure that is (None until the job decides:
    :func:`~rag_judge.jobs.sweep.decision.decide`)."""

    @property
    def value_columns(self) -> list[str]:
        """Every numeric metric column: retrieval measures, judges, calibrated judges."""
        prefixed = [c for c in self.per_question.columns if c.startswith(("doc_", "text_"))]
        return [*prefixed, *self.metrics, *self.calibrated]

    def summary(
        self, *, confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0
    ) -> pd.DataFrame:
        """Per k and metric: ``mean``, ``ci_low``/``ci_high`` (bootstrap) and ``n_scored``; with
        the refusal shares (:data:`~rag_judge.jobs.sweep.decision.refusals.REFUSAL_MEASURES`)
        when the sweep has answers."""
        frame, columns = self.per_question, self.value_columns
        if REFUSED in frame.columns and frame[REFUSED].notna().any():
            frame = frame.assign(**refusal_indicators(frame))
            columns = [*columns, *REFUSAL_MEASURES]
        return summarise(frame, columns, confidence=confidence, n_resamples=n_resamples, seed=seed)

    def nothing_judged(self) -> str | None:
        """Why the sweep has no answer or no model-judged value because every model call
        failed (it would otherwise name a best k from retrieval alone); else None."""
        frame = self.per_question
        if frame.empty:
            return None
        generation = frame["generation_status"].astype(str)
        judged = [m for m in self.metrics if (j := JUDGES.get(m)) is None or j.uses_model]
        failures = Counter(s for s in generation if s in FAILED_STATUSES)
        for metric in judged:
            failures.update(
                s for s in frame[f"{metric}_status"].astype(str) if s in FAILED_STATUSES
            )
        if not failures:
            return None
        no_answer = generation.isin(FAILED_STATUSES).all()
        no_value = bool(judged) and not any(frame[m].notna().any() for m in judged)
        if not (no_answer or no_value):
            return None
        counts = ", ".join(f"{n} {status}" for status, n in sorted(failures.items()))
        what = "no answer was generated" if no_answer else "no judge gave a value"
        return f"{what}: every model call failed ({counts})"


def build_frame(
    rows: Sequence[dict[str, Any]], plan: SweepPlan, by_id: Values, by_text: Values
) -> pd.DataFrame:
    """The per-question table: rows joined with the retrieval values, in a fixed column order."""
    retrieval = [
        *(f"doc_{m}" for m in ID_MEASURES if by_id),
        *(f"text_{m}" for m in TEXT_MEASURES if by_text),
    ]
    joined = [
        {**row, **by_id.get(key, {}), **by_text.get(key, {})}
        for row in rows
        for key in [(row["question_id"], row["k"])]
    ]
    judges = [c for m in plan.metrics for c in (m, f"{m}_status")]
    tail = [
        ANSWERABLE,
        "answer",
        "generation_status",
        REFUSED,
        "answer_source",
        ANSWER_TOKENS,
        *COST_COLUMNS,
    ]
    columns = [*ID_COLUMNS, *retrieval, *judges, *tail]
    frame = pd.DataFrame(joined, columns=columns)
    numeric = dict.fromkeys([*retrieval, *plan.metrics], "Float64")
    counts = dict.fromkeys(("k", "n_contexts", ANSWER_TOKENS, *COST_COLUMNS), "Int64")
    flags = dict.fromkeys((ANSWERABLE, REFUSED), "boolean")
    return frame.astype({**numeric, **counts, **flags})
