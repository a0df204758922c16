"""All four core judges end to end with the real embedded model and real embedders.

One short English and one short Chinese sample, a faithful and complete answer each: every
judge must score (status ok), and score these easy cases high. Slow (about a minute).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import rag_judge
from rag_judge.backends import CallPolicy, ModelClient, ResponseCache
from rag_judge.core.types import RagSample

SAMPLES = [
    RagSample(
        id="en",
        question="When was the Eiffel Tower completed?",
        contexts=(
            "The Eiffel Tower in Paris was completed in 1889 for the World's Fair.",
            "The Statue of Liberty was dedicated in 1886.",
        ),
        answer="The Eiffel Tower was completed in 1889.",
        reference="It was completed in 1889.",
    ),
    RagSample(
        id="zh",
        question="长城位于哪个国家?",
        contexts=("长城是位于中国北方的古代防御工程。", "金字塔位于埃及。"),
        answer="长城位于中国。",
        reference="中国",
    ),
]


@pytest.mark.slow
def test_four_judges_on_english_and_chinese(local_llama: Any, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "responses.sqlite")
    client = ModelClient(local_llama, cache=cache, policy=CallPolicy(concurrency=1, timeout=600))
    result = rag_judge.evaluate(SAMPLES, client=client, cache=tmp_path / "responses.sqlite")
    problems = []
    for sample in result.samples:
        assert sample.prompt_language == sample.sample.id
        for metric, judged in sample.results.items():
            if judged.status != "ok" or judged.value is None:
                problems.append(f"{sample.sample.id} {metric}: {judged.status} {judged.error}")
                continue
            assert 0.0 <= judged.value <= 1.0
            if metric in ("faithfulness", "context_recall", "completeness"):
                assert judged.value >= 0.5, (sample.sample.id, metric, judged.claims)
            assert judged.prompts
    assert not problems, problems
    faithful = result.samples[0].results["faithfulness"]
    assert all(c.support_probability is not None for c in faithful.claims)
    assert result.samples[0].results["context_recall"].by_k is not None
    # a re-run is answered from the cache: no model call at all
    fresh = ModelClient(local_llama, cache=cache, policy=CallPolicy(concurrency=1, timeout=600))
    again = rag_judge.evaluate(SAMPLES, client=fresh, cache=tmp_path / "responses.sqlite")
    tally = again.ledger.models[client.name]
    assert tally.calls == 0
    assert tally.cached > 0

    def scores(run: rag_judge.EvaluationResult) -> list[Any]:
        return [
            (m, r.value, r.status, r.claims, r.by_k)
            for s in run.samples
            for m, r in s.results.items()
        ]

    assert scores(again) == scores(result)
