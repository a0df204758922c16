"""Our judges as scorers for ``mlflow.genai.evaluate``, as MLflow 3 wraps ragas or Phoenix.

``judge_scorer("faithfulness", model=...)`` gives an ``mlflow.genai.scorers.Scorer`` for any
judge of :data:`rag_judge.judges.JUDGES`; ``faithfulness_scorer(model=...)`` and the like are
the same factory, one name per judge, made from that table (no judge is named here). Per row,
MLflow passes ``inputs``, ``outputs``, ``expectations`` and the trace; the scorer reads:

- the question: ``inputs["question"]`` (or ``query``, ``user_input``, or ``inputs`` itself
  when it is text);
- the contexts: ``inputs["contexts"]`` (or ``retrieved_contexts``), else the documents of the
  trace's retriever spans, as MLflow's own retrieval judges read them;
- the answer: ``outputs`` (text, or a dict with ``answer``/``response``);
- the reference: ``expectations["expected_response"]`` (or ``reference``).

and judges the row with :func:`rag_judge.evaluate` (the response cache, retries and the
model's settings as everywhere). The ``Feedback`` carries the value, the claims and verdicts
as its rationale, and the status; a row the judge cannot score (``no_claims``, a missing
input) has no value and says why, and a failed model call is the Feedback's error.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from rag_judge.core.types import JudgeResult
from rag_judge.integrations.mlflow_import import import_mlflow
from rag_judge.judges import JUDGES, get_judges

if TYPE_CHECKING:
    from mlflow.entities import Feedback

FRAMEWORK = "rag_judge"
"""The ``mlflow.scorer.framework`` metadata of every Feedback (as ragas' say ``ragas``)."""
SUFFIX = "_scorer"
_QUESTION_KEYS = ("question", "query", "user_input", "request")
_CONTEXT_KEYS = ("contexts", "retrieved_contexts", "context")
_ANSWER_KEYS = ("answer", "response", "output")
_REFERENCE_KEYS = ("expected_response", "reference", "expected_output", "ground_truth")


def judge_scorer(judge: str, *, name: str | None = None, **options: Any) -> Any:
    """The judge named ``judge`` as an MLflow scorer.

    Args:
        judge: A name in :data:`rag_judge.judges.JUDGES`.
        name: The scorer's name in MLflow (default: the judge's).
        **options: What :func:`rag_judge.evaluate` takes: ``model``, ``base_url``,
            ``embeddings``, ``mode``, ``cache``, ``settings`` ...

    Raises:
        InputError: an unknown judge (the message lists the known ones).
        MlflowMissing: MLflow is not installed (the message names the extra).
    """
    (found,) = get_judges([judge])
    return _scorer_class()(name=name or found.name, judge=found.name, options=dict(options))


def __getattr__(attribute: str) -> Callable[..., Any]:
    """``<judge>_scorer``: :func:`judge_scorer` for that judge."""
    judge = attribute.removesuffix(SUFFIX)
    if attribute.endswith(SUFFIX) and judge in JUDGES:
        factory = functools.partial(judge_scorer, judge)
        factory.__doc__ = f"The {JUDGES[judge].label} judge as an MLflow scorer (judge_scorer)."
        return factory
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *(f"{judge}{SUFFIX}" for judge in JUDGES)])


@functools.cache
def _scorer_class() -> type:
    """The Scorer subclass, made once MLflow is imported (it is a pydantic model)."""
    import_mlflow()
    from mlflow.entities import Trace
    from mlflow.genai.scorers import Scorer

    class RagJudgeScorer(Scorer):
        """A rag_judge judge scoring one row of ``mlflow.genai.evaluate``."""

        judge: str
        options: dict[str, Any]

        def __call__(
            self,
            *,
            inputs: Any = None,
            outputs: Any = None,
            expectations: dict[str, Any] | None = None,
            trace: Trace | None = None,
            session: list[Trace] | None = None,
        ) -> Feedback:
            """Judge the row (``session`` is for multi-turn scorers: ours judge one row)."""
            row = sample_row(inputs, outputs, expectations, trace)
            return feedback(self.name, _judged(self.judge, row, self.options), self.options)

    return RagJudgeScorer


def _judged(judge: str, row: Mapping[str, Any], options: Mapping[str, Any]) -> JudgeResult:
    """One row judged by one judge, with its own session (MLflow scores rows on threads)."""
    from rag_judge.jobs.score.run import evaluate

    result = evaluate([dict(row)], [judge], **options)
    return result.samples[0].results[judge]


def sample_row(
    inputs: Any, outputs: Any, expectations: Mapping[str, Any] | None, trace: Any
) -> dict[str, Any]:
    """The row a judge reads, from what MLflow passes a scorer (see the module docstring)."""
    given = inputs if isinstance(inputs, Mapping) else {}
    question = inputs if isinstance(inputs, str) else _first(given, _QUESTION_KEYS)
    contexts = _first(given, _CONTEXT_KEYS)
    if contexts is None and trace is not None:
        from mlflow.genai.utils.trace_utils import extract_retrieval_context_from_trace

        found = extract_retrieval_context_from_trace(trace)
        contexts = [doc["content"] for docs in found.values() for doc in docs if doc["content"]]
    answer = outputs if not isinstance(outputs, Mapping) else _first(outputs, _ANSWER_KEYS)
    reference = _first(expectations or {}, _REFERENCE_KEYS)
    row: dict[str, Any] = {"question": question, "answer": answer, "reference": reference}
    row["contexts"] = [contexts] if isinstance(contexts, str) else list(contexts or [])
    return {k: v for k, v in row.items() if v is not None}


def feedback(name: str, result: JudgeResult, options: Mapping[str, Any]) -> Feedback:
    """The judge's result as an MLflow ``Feedback``: value, claims as rationale, status."""
    import_mlflow()
    from mlflow.entities import AssessmentSource, AssessmentSourceType, Feedback
    from mlflow.genai.scorers import FRAMEWORK_METADATA_KEY

    uses_model = JUDGES[result.metric].uses_model
    source = AssessmentSource(
        source_type=AssessmentSourceType.LLM_JUDGE if uses_model else AssessmentSourceType.CODE,
        source_id=str(options.get("model") or FRAMEWORK) if uses_model else result.metric,
    )
    metadata = {
        FRAMEWORK_METADATA_KEY: FRAMEWORK,
        "status": result.status,
        "prompts": ",".join(result.prompts),
    }
    error = result.error if result.failed else None
    return Feedback(
        name=name,
        value=result.value,
        error=error,
        rationale=rationale(result),
        source=source,
        metadata=metadata,
    )


def rationale(result: JudgeResult) -> str:
    """Why the value is what it is: the status when there is none, then claim by claim."""
    head = (
        f"{result.status}" + (f": {result.error}" if result.error else "")
        if result.value is None
        else f"{result.metric} = {result.value:.3f}"
    )
    lines = [head]
    for claim in result.claims:
        reason = f" ({claim.reason})" if claim.reason else ""
        lines.append(f"- {claim.verdict or 'no verdict'}: {claim.claim}{reason}")
    return "\n".join(lines)


def _first(mapping: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    """The value of the first of ``keys`` that ``mapping`` has (None when none)."""
    return next((mapping[k] for k in keys if mapping.get(k) is not None), None)
