"""The batch path against OpenAI's own Batch API (opt-in: ``OPENAI_API_KEY=... pytest -m live``).

Two rows, faithfulness with gpt-4o-mini: two stages (claims, then verdicts), every row judged,
the ledger billing the batch at the discount, and a re-run that submits nothing. A batch
usually finishes in minutes; OpenAI allows it 24 hours.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from rag_judge.core.types import RagSample
from rag_judge.jobs.score.job import ScoreRun, score_job
from rag_judge.jobs.score.options import ScoreOptions
from rag_judge.runtime.executors import Batch
from rag_judge.runtime.executors.batched import state_path_for
from rag_judge.runtime.session import open_session
from rag_judge.runtime.settings import load_settings

pytestmark = pytest.mark.live

ROWS = [
    {
        "question": "When was the Eiffel Tower finished?",
        "contexts": ["The Eiffel Tower was completed in March 1889 for the World's Fair."],
        "answer": "It was finished in 1889.",
    },
    {
        "question": "What is the capital of Australia?",
        "contexts": ["Canberra has been the capital of Australia since 1913."],
        "answer": "Sydney is the capital.",
    },
]


def test_score_batch_through_openai(tmp_path: Path) -> None:
    if not os.environ.get("OPENAI_API_KEY"):
        pytest.skip("OPENAI_API_KEY is not set")
    settings = load_settings(
        {"model": "openai/gpt-4o-mini", "cache_dir": tmp_path / "cache"}, env=dict(os.environ)
    )

    def run() -> ScoreRun:
        executor = Batch(state_path_for(tmp_path / "out.jsonl"), poll_seconds=20)
        samples = [RagSample.model_validate(r) for r in ROWS]
        options = ScoreOptions(metrics=("faithfulness",))
        return asyncio.run(score_job(samples, open_session(settings), options, executor=executor))

    first = run()
    assert [s.status for s in first.stages] == ["completed", "completed"]
    values = [s.results["faithfulness"] for s in first.result.samples]
    assert [v.status for v in values] == ["ok", "ok"]
    assert values[0].value is not None
    assert values[1].value is not None
    assert values[0].value > values[1].value  # Sydney is not what the passage says
    described = first.result.ledger.describe("openai/gpt-4o-mini")
    assert "through a Batch API, at 50% of the price" in described
    assert run().stages == ()
