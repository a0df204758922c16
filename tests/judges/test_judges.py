"""Every judge, table-driven, with a scripted model routed by prompt id: no network, no weights.

Each case scripts what the model replies to each step and states the expected value, status
and number of calls; the derivation of each value is in the case's comment.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import pytest

import rag_judge
from rag_judge.backends import ModelClient, ResponseCache
from rag_judge.backends.errors import BackendError
from rag_judge.backends.providers.scripted import ScriptedBackend, ScriptedEmbedder
from rag_judge.backends.types import ChatRequest
from rag_judge.core.types import RagSample

EN = RagSample(
    id="en",
    question="When was the Eiffel Tower finished?",
    contexts=("The Eiffel Tower was finished in 1889.", "Paris is the capital of France."),
    answer="It was finished in 1889 and is 330 m tall.",
    reference="The Eiffel Tower was finished in 1889.",
)
ZH = RagSample(
    id="zh",
    question="埃菲尔铁塔是哪一年建成的?",
    contexts=("埃菲尔铁塔于1889年建成。", "巴黎是法国的首都。"),
    answer="埃菲尔铁塔于1889年建成。",
    reference="1889年建成。",
)


def claims(*items: str) -> str:
    return json.dumps({"claims": list(items)})


def checks(*rows: tuple[int, str, list[int]]) -> str:
    return json.dumps(
        {"verdicts": [{"claim": c, "reason": "r", "verdict": v, "passages": p} for c, v, p in rows]}
    )


def questions(*items: str, noncommittal: bool = False) -> str:
    return json.dumps({"questions": list(items), "noncommittal": noncommittal})


Reply = str | BaseException | float


@dataclass
class Router:
    """Replies per prompt id (queues), recording which prompt each request used."""

    replies: dict[str, list[Reply]]
    seen: list[str] = field(default_factory=list)

    def __call__(self, request: ChatRequest) -> Reply:
        assert request.prompt_id is not None
        prompt = request.prompt_id.split(".")[0]
        self.seen.append(request.prompt_id)
        queue = self.replies.get(prompt)
        if not queue:
            raise AssertionError(f"unexpected call to {prompt}")
        return queue.pop(0)


def run(
    sample: RagSample, metrics: list[str], replies: dict[str, list[Reply]], **options: Any
) -> tuple[rag_judge.EvaluationResult, Router]:
    router = Router({k: list(v) for k, v in replies.items()})
    client = ModelClient(ScriptedBackend(respond=router))
    result = rag_judge.evaluate(
        [sample],
        metrics,
        client=client,
        embedder=ScriptedEmbedder(),
        cache=False,
        support_probability=options.pop("support_probability", False),
        **options,
    )
    return result, router


@dataclass(frozen=True)
class Case:
    name: str
    sample: RagSample
    metric: str
    replies: dict[str, list[Reply]]
    value: float | None
    status: str
    calls: int


CASES = [
    # 2 answer claims, 1 supported by passage 1 -> 1/2
    Case(
        "faithfulness happy path",
        EN,
        "faithfulness",
        {
            "claims/extract": [claims("Finished in 1889.", "It is 330 m tall.")],
            "claims/verify": [checks((1, "supported", [1]), (2, "not_mentioned", []))],
        },
        0.5,
        "ok",
        2,
    ),
    Case(
        "faithfulness of a refusal has no claims",
        EN.model_copy(update={"answer": "I don't know."}),
        "faithfulness",
        {"claims/extract": [claims()]},
        None,
        "no_claims",
        1,
    ),
    # the single claim is contradicted -> 0/1
    Case(
        "faithfulness contradicted",
        EN,
        "faithfulness",
        {
            "claims/extract": [claims("Finished in 1890.")],
            "claims/verify": [checks((1, "contradicted", [1]))],
        },
        0.0,
        "ok",
        2,
    ),
    # invalid JSON, then invalid again after the repair prompt -> parse_error, no value
    Case(
        "faithfulness parse failure",
        EN,
        "faithfulness",
        {"claims/extract": ["not json", "still not json"]},
        None,
        "parse_error",
        2,
    ),
    Case(
        "faithfulness backend failure",
        EN,
        "faithfulness",
        {"claims/extract": [BackendError("bad request", transient=False, status_code=400)]},
        None,
        "backend_error",
        1,
    ),
    Case(
        "completeness without a reference",
        EN.model_copy(update={"reference": None}),
        "completeness",
        {},
        None,
        "missing_input",
        0,
    ),
    Case(
        "faithfulness without contexts",
        EN.model_copy(update={"contexts": ()}),
        "faithfulness",
        {},
        None,
        "missing_input",
        0,
    ),
    # reference has 1 claim, the answer states it -> 1/1
    Case(
        "completeness happy path",
        EN,
        "completeness",
        {
            "claims/extract": [claims("The tower was finished in 1889.")],
            "claims/verify": [checks((1, "supported", [1]))],
        },
        1.0,
        "ok",
        2,
    ),
    # 2 reference claims; passage 2 supports claim 1, none supports claim 2 -> recall 1/2 at k=2
    Case(
        "context recall",
        EN,
        "context_recall",
        {
            "claims/extract": [claims("A", "B")],
            "claims/verify": [checks((1, "supported", [2]), (2, "not_mentioned", []))],
        },
        0.5,
        "ok",
        2,
    ),
    # useful passages: 2 only -> AP = (1/2) / 1 = 0.5
    Case(
        "context precision",
        EN,
        "context_precision",
        {
            "claims/extract": [claims("A", "B")],
            "claims/verify": [checks((1, "supported", [2]), (2, "not_mentioned", []))],
        },
        0.5,
        "ok",
        2,
    ),
    # Chinese: the answer states the one reference claim -> 1.0 (prompts in Chinese, below)
    Case(
        "completeness in Chinese",
        ZH,
        "completeness",
        {
            "claims/extract": [claims("埃菲尔铁塔于1889年建成。")],
            "claims/verify": [checks((1, "supported", [1]))],
        },
        1.0,
        "ok",
        2,
    ),
    # the question itself comes back: cosine 1 for each of the 3 questions
    Case(
        "answer relevancy, same question",
        EN,
        "answer_relevancy",
        {"answer_relevancy/questions": [questions(*[EN.question or ""] * 3)]},
        1.0,
        "ok",
        1,
    ),
    Case(
        "answer relevancy, noncommittal answer scores 0",
        EN,
        "answer_relevancy",
        {"answer_relevancy/questions": [questions("What?", noncommittal=True)]},
        0.0,
        "ok",
        1,
    ),
    # the verifier skips claim 2, is asked again about it alone, then answers
    Case(
        "a skipped claim is asked again",
        EN,
        "faithfulness",
        {
            "claims/extract": [claims("A", "B")],
            "claims/verify": [
                checks((1, "supported", [1])),
                checks((1, "supported", [1])),  # now numbered 1 in its own batch
            ],
        },
        1.0,
        "ok",
        3,
    ),
    Case(
        "a claim skipped twice is a parse error",
        EN,
        "faithfulness",
        {
            "claims/extract": [claims("A", "B")],
            "claims/verify": [checks((1, "supported", [1])), checks()],
        },
        None,
        "parse_error",
        3,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_judge_cases(case: Case) -> None:
    result, router = run(case.sample, [case.metric], case.replies)
    judged = result.samples[0].results[case.metric]
    assert judged.status == case.status, judged.error
    if case.value is None:
        assert judged.value is None
    else:
        assert judged.value == pytest.approx(case.value)
    assert judged.calls == case.calls
    assert all(not queue for queue in router.replies.values()), "a scripted reply was not used"
    if case.status == "ok":
        assert judged.prompts
        assert all("@" in p and "#" in p for p in judged.prompts)


def test_chinese_samples_use_chinese_prompts() -> None:
    _, router = run(
        ZH,
        ["faithfulness"],
        {
            "claims/extract": [claims("埃菲尔铁塔于1889年建成。")],
            "claims/verify": [checks((1, "supported", [1]))],
        },
    )
    assert router.seen
    assert all(".zh@" in p for p in router.seen)


def test_context_recall_for_every_k_comes_from_one_verify_call() -> None:
    sample = EN.model_copy(update={"contexts": ("c1", "c2", "c3", "c4")})
    result, router = run(
        sample,
        ["context_recall", "context_precision"],
        {
            "claims/extract": [claims("A", "B", "C")],
            # A in 3 (and 4), B in 1, C nowhere
            "claims/verify": [
                checks((1, "supported", [4, 3]), (2, "supported", [1]), (3, "not_mentioned", []))
            ],
        },
    )
    recall = result.samples[0].results["context_recall"]
    assert recall.by_k == {
        1: pytest.approx(1 / 3),
        2: pytest.approx(1 / 3),
        3: pytest.approx(2 / 3),
        4: pytest.approx(2 / 3),
    }
    # useful: 1, 3, 4 -> AP = (1/1 + 2/3 + 3/4) / 3
    precision = result.samples[0].results["context_precision"]
    assert precision.value == pytest.approx((1 + 2 / 3 + 3 / 4) / 3)
    assert len(router.seen) == 2  # one extraction, one verification, shared by both judges


def test_judges_share_steps_within_a_sample() -> None:
    # completeness and context recall both need the reference's claims: extracted once
    result, router = run(
        EN,
        ["completeness", "context_recall", "context_utilization"],
        {
            "claims/extract": [claims("A", "B")],
            "claims/verify": [
                checks((1, "supported", [1]), (2, "supported", [2])),
                checks((1, "supported", [1]), (2, "not_mentioned", [])),
            ],
        },
    )
    extracts = [p for p in router.seen if p.startswith("claims/extract")]
    assert len(extracts) == 1
    assert len(router.seen) == 3
    values = {m: r.value for m, r in result.samples[0].results.items()}
    assert set(values) == {"completeness", "context_recall", "context_utilization"}
    assert all(v is not None for v in values.values())


def test_support_probability_is_attached_per_claim() -> None:
    result, _ = run(
        EN,
        ["faithfulness"],
        {
            "claims/extract": [claims("A", "B")],
            "claims/verify": [checks((1, "supported", [1]), (2, "not_mentioned", []))],
            "claims/support": [0.9, 0.2],
        },
        support_probability=True,
    )
    judged = result.samples[0].results["faithfulness"]
    assert [c.support_probability for c in judged.claims] == [0.9, 0.2]
    assert judged.calls == 4


def test_noise_sensitivity_counts_wrong_claims_found_in_contexts() -> None:
    result, _ = run(
        EN,
        ["noise_sensitivity"],
        {
            "claims/extract": [claims("A", "B")],
            "claims/verify": [
                checks((1, "supported", [1]), (2, "supported", [2])),  # vs contexts
                checks((1, "supported", [1]), (2, "contradicted", [1])),  # vs reference
            ],
        },
    )
    judged = result.samples[0].results["noise_sensitivity"]
    assert judged.value == 0.5  # B is wrong and came from passage 2
    assert judged.details["misled_claims"] == ["B"]


def test_summary_counts_statuses_and_never_averages_unscored_rows() -> None:
    samples = [EN, EN.model_copy(update={"id": "no-ref", "reference": None})]
    router = Router(
        {
            "claims/extract": [claims("A")],
            "claims/verify": [checks((1, "supported", [1]))],
        }
    )
    result = rag_judge.evaluate(
        samples,
        ["completeness"],
        client=ModelClient(ScriptedBackend(respond=router)),
        cache=False,
        support_probability=False,
    )
    (summary,) = result.summary()
    assert summary.mean == 1.0
    assert (summary.n_scored, summary.n) == (1, 2)
    assert summary.statuses == {"missing_input": 1, "ok": 1}
    frame = result.to_pandas()
    assert list(frame["status"]) == ["ok", "missing_input"]
    assert frame["value"].dtype == "Float64"
    assert frame["value"].tolist() == [1.0, pd.NA]  # missing, not NaN
    assert frame.groupby("metric")["value"].mean().tolist() == [1.0]
    assert "NaN" not in json.dumps(result.to_records())


def test_rerun_with_the_cache_makes_no_calls(tmp_path: Any) -> None:
    replies: Callable[[], dict[str, list[Reply]]] = lambda: {  # noqa: E731
        "claims/extract": [claims("A")],
        "claims/verify": [checks((1, "supported", [1]))],
    }
    for expected_calls in (2, 0):
        router = Router(replies())
        cache = ResponseCache(tmp_path / "c.sqlite")
        client = ModelClient(ScriptedBackend(respond=router), cache=cache)
        rag_judge.evaluate([EN], ["faithfulness"], client=client, support_probability=False)
        assert len(router.seen) == expected_calls


def test_unknown_metric_lists_the_known_ones() -> None:
    with pytest.raises(rag_judge.InputError, match="known: faithfulness"):
        rag_judge.evaluate([EN], ["faithfulnes"], client=ModelClient(ScriptedBackend()))


def test_public_names_resolve() -> None:
    for name in rag_judge.__all__:
        assert getattr(rag_judge, name) is not None


@pytest.mark.parametrize(
    ("options", "field"),
    [({"noncommittal": "skip"}, "noncommittal"), ({"n_questions": 0}, "n_questions")],
)
def test_bad_judge_options_name_the_option(options: dict[str, Any], field: str) -> None:
    with pytest.raises(rag_judge.InputError, match=f"field '{field}'"):
        rag_judge.evaluate([EN], client=ModelClient(ScriptedBackend()), **options)
