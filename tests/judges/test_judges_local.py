"""All four core judges end to end with the real embedded model and real embedders, in both
modes: ``score`` (the default for the local model) and ``generate``.

One short English and one short Chinese sample, a faithful and complete answer each: every
judge must score (status ok), and score these easy cases high; in score mode an unfaithful
answer must also score below the faithful one. Slow (about a minute per mode).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import rag_judge
from rag_judge.backends import CallPolicy, ModelClient, ResponseCache
from rag_judge.core.types import RagSample
from rag_judge.judges import JUDGES

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
@pytest.mark.parametrize("mode", ["score", "generate"])
def test_four_judges_on_english_and_chinese(local_llama: Any, tmp_path: Path, mode: str) -> None:
    cache = ResponseCache(tmp_path / "responses.sqlite")
    client = ModelClient(local_llama, cache=cache, policy=CallPolicy(concurrency=1, timeout=600))
    options: dict[str, Any] = {"mode": None if mode == "score" else mode}  # score: the default
    result = rag_judge.evaluate(
        SAMPLES, client=client, cache=tmp_path / "responses.sqlite", **options
    )
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
            assert judged.prompts or not JUDGES[metric].uses_model  # EM and F1 need no prompt
    assert not problems, problems
    faithful = result.samples[0].results["faithfulness"]
    assert all(c.support_probability is not None for c in faithful.claims)
    assert result.samples[0].results["context_recall"].by_k is not None
    # a re-run is answered from the cache: no model call at all
    fresh = ModelClient(local_llama, cache=cache, policy=CallPolicy(concurrency=1, timeout=600))
    again = rag_judge.evaluate(
        SAMPLES, client=fresh, cache=tmp_path / "responses.sqlite", **options
    )
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


UNFAITHFUL = [
    sample.model_copy(update={"id": f"{sample.id}-wrong", "answer": wrong})
    for sample, wrong in zip(
        SAMPLES, ["The Eiffel Tower was completed in 1925 in Rome.", "长城位于日本。"], strict=True
    )
]


@pytest.mark.slow
def test_the_scoring_path_tells_a_faithful_answer_from_an_unfaithful_one(
    local_llama: Any,
) -> None:
    client = ModelClient(local_llama, policy=CallPolicy(concurrency=1, timeout=600))
    result = rag_judge.evaluate(
        [*SAMPLES, *UNFAITHFUL], ["faithfulness"], client=client, cache=False, mode="score"
    )
    values = {s.sample.id: s.results["faithfulness"] for s in result.samples}
    for language in ("en", "zh"):
        right, wrong = values[language], values[f"{language}-wrong"]
        assert (right.status, wrong.status) == ("ok", "ok"), (right.error, wrong.error)
        assert right.value is not None
        assert wrong.value is not None
        assert right.value - wrong.value > 0.3, (language, right.claims, wrong.claims)
        assert all(c.verdict != "supported" for c in wrong.claims)
        assert all(c.reason for c in wrong.claims)  # a reason for every unsupported claim
        assert right.prompts != ()
