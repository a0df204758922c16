"""Our judges as scorers in a real ``mlflow.genai.evaluate`` run against a local sqlite store.

The judge model is the fake OpenAI-compatible server; what MLflow aggregates and stores
(the values, the claims as rationale, the status) is read back from the evaluation's table.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mlflow
import pytest
from fake_openai_server import FakeOpenAIServer, fake_openai  # noqa: F401

from rag_judge.core.errors import InputError
from rag_judge.integrations import mlflow as integration
from rag_judge.judges import JUDGES


def judge_model(body: dict[str, Any]) -> str:
    """One claim per answer; supported only when the passages say 1889."""
    system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
    if '"verdicts"' in system:
        verdict = "supported" if "1889" in user.split("Claims")[0] else "not_mentioned"
        return json.dumps({"verdicts": [{"claim": 1, "reason": "r", "verdict": verdict}]})
    return json.dumps({"claims": ["It was built in 1889."]})


ROWS = [
    {
        "inputs": {"question": "When was it built?", "contexts": ["It was built in 1889."]},
        "outputs": "In 1889.",
        "expectations": {"expected_response": "In 1889."},
    },
    {
        "inputs": {"question": "When was it built?", "contexts": ["It is made of iron."]},
        "outputs": "In 1889.",
        "expectations": {"expected_response": "1889"},
    },
]


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A sqlite store with an experiment whose artifacts stay in tmp_path."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("RAG_JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    mlflow.set_tracking_uri(uri)
    found = mlflow.MlflowClient(uri).create_experiment(
        "scorers", artifact_location=(tmp_path / "artifacts").as_uri()
    )
    mlflow.set_experiment(experiment_id=found)
    return uri


def test_judges_score_rows_in_a_real_genai_evaluate(
    store: str,
    fake_openai: FakeOpenAIServer,  # noqa: F811
) -> None:
    fake_openai.respond = judge_model
    base_url = f"http://127.0.0.1:{fake_openai.port}/v1"
    scorers = [
        integration.faithfulness_scorer(model="openai/judge", base_url=base_url, mode="generate"),
        integration.judge_scorer("exact_match"),
    ]
    result = mlflow.genai.evaluate(data=ROWS, scorers=scorers)
    assert result.metrics["faithfulness/mean"] == pytest.approx(0.5)
    assert result.metrics["exact_match/mean"] == pytest.approx(0.5)
    table = result.tables["eval_results"]
    assert table["faithfulness/value"].tolist() == [1.0, 0.0]
    assert table["faithfulness/rationale"][1].splitlines()[1] == (
        "- not_mentioned: It was built in 1889. (r)"
    )
    run = mlflow.MlflowClient(store).get_run(result.run_id)
    assert run.data.metrics["faithfulness/mean"] == pytest.approx(0.5)


def test_a_row_without_contexts_has_no_value_and_says_why(store: str) -> None:
    scorer = integration.faithfulness_scorer(model="openai/judge")
    found = scorer(inputs={"question": "Q?"}, outputs="An answer.")
    assert found.value is None
    assert found.rationale.startswith("missing_input")
    assert found.metadata["status"] == "missing_input"


def test_every_judge_has_a_scorer_and_an_unknown_one_is_refused() -> None:
    for name in JUDGES:
        assert getattr(integration, f"{name}_scorer")().name == name
        assert f"{name}_scorer" in dir(integration)
    with pytest.raises(AttributeError):
        integration.faithfulnes_scorer  # noqa: B018
    with pytest.raises(InputError, match="known: faithfulness"):
        integration.judge_scorer("faithfulnes")


def test_contexts_come_from_the_traces_retriever_spans(store: str) -> None:
    with mlflow.start_span(name="rag") as root:
        root.set_inputs({"question": "When was it built?"})
        with mlflow.start_span(name="retrieve", span_type="RETRIEVER") as span:
            span.set_outputs([{"page_content": "It was built in 1889.", "metadata": {}}])
        root.set_outputs("In 1889.")
    mlflow.flush_trace_async_logging()
    trace = mlflow.get_trace(root.trace_id)
    assert trace is not None
    row = integration.sample_row({"question": "When?"}, "In 1889.", None, trace)
    assert row == {"question": "When?", "answer": "In 1889.", "contexts": ["It was built in 1889."]}
