"""Which models answered and judged a sweep, and the warning when one model judged itself.

A model rates its own output above others' (self-preference bias, Panickssery et al. 2024,
"LLM Evaluators Recognize and Favor Their Own Generations"), so a sweep whose generator also
judged says so wherever its results are read: the markdown summary and the HTML report.
"""

from __future__ import annotations

from rag_judge.jobs.sweep.result import SweepResult


def generator_name(result: SweepResult) -> str:
    """Who answered: ``external`` when the user's RAG gave every answer, else the generator."""
    sources = result.per_question.get("answer_source")
    if sources is not None and len(sources) and (sources == "external").all():
        return "external (your RAG's answers)"
    return result.generator or result.model or "unknown"


def models_sentence(result: SweepResult) -> str:
    """``Generator `a`, judge `b``` (one sentence, markdown code spans)."""
    return f"Generator `{generator_name(result)}`, judge `{result.model or 'unknown'}`"


def self_judging_warning(result: SweepResult) -> str | None:
    """A warning when the generator judged its own answers (None when judged by another)."""
    if not result.metrics or generator_name(result) != (result.model or "unknown"):
        return None
    return (
        f"The generator {result.model} also judged its own answers: a model tends to rate its "
        "own output higher, so the judge scores may be optimistic. Name another judge with "
        "--judge (or `judge` in the settings)."
    )
