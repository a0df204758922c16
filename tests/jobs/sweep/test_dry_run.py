"""``sweep --dry-run``: the plan counted from the prompts and passages, before any model call."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_openai_server import FakeOpenAIServer, fake_openai  # noqa: F401
from sweep_toy import TOY

from rag_judge.cli import main
from rag_judge.jobs.sweep import SweepOptions
from rag_judge.jobs.sweep.dry_run import Speed, approximate_tokens, plan_cost
from rag_judge.jobs.sweep.explain import SHOWN_WORST
from rag_judge.judges import JudgeOptions
from rag_judge.judges.call_rates import REASON

CONTEXTS = {
    "q1": ["Germany is a country.", "Paris is the capital of France.", "France has rivers."],
    "q2": ["Tokyo is the capital of Japan.", "Germany is a country.", "Paris is large."],
}


def words(text: str) -> int:
    return len(text.split())


def test_the_plan_counts_every_answer_and_reads_each_passage_once_per_question() -> None:
    options = SweepOptions(ks=(1, 2, 3), metrics=("faithfulness", "exact_match"))
    plan = plan_cost(TOY, CONTEXTS, options, mode="score", count=words, speed=Speed(100, 10))
    assert (plan.questions, plan.answers) == (2, 6)
    # a generation per answer, faithfulness 1.1 probes; exact match is free; then a reason
    # for each row the report shows (SHOWN_WORST of them), written after the sweep
    assert plan.calls == round(6 * (1 + 1.1) + SHOWN_WORST)
    without = plan_cost(
        TOY, CONTEXTS, SweepOptions(ks=(1, 2, 3), metrics=("faithfulness",),
                                    judge=JudgeOptions(reasons=False)),
        mode="score", count=words, speed=Speed(100, 10),
    )  # fmt: skip
    assert plan.calls - without.calls == SHOWN_WORST
    assert plan.read_tokens is not None
    assert without.read_tokens is not None
    # each re-reads its row's passages: more than the shorter prompts' suffixes
    assert plan.read_tokens - without.read_tokens > SHOWN_WORST * REASON.prompt
    # the generator re-reads only what follows the shared prefix: read < sent
    assert plan.read_tokens is not None
    assert plan.read_tokens < plan.prompt_tokens
    assert plan.minutes == pytest.approx(
        (plan.read_tokens / 100 + plan.completion_tokens / 10) / 60, rel=0.01
    )


def test_a_priced_model_gets_a_cost_and_an_until_decided_run_a_range() -> None:
    options = SweepOptions(ks=(1, 2), metrics=("faithfulness",), until_decided=True, step=1)
    plan = plan_cost(TOY, CONTEXTS, options, mode="generate", count=words, price=(1e-6, 2e-6))
    assert plan.cost_usd == pytest.approx(plan.prompt_tokens * 1e-6 + plan.completion_tokens * 2e-6)
    assert plan.minutes is None  # not in process: no time
    half = plan.scaled(1, 2)
    assert (half.answers, half.calls) == (2, round(plan.calls / 2))


def test_tokens_are_estimated_by_script_without_a_tokenizer() -> None:
    assert approximate_tokens("广三铁路") == 4
    assert approximate_tokens("one two three four five six seven eight nine ten") == 13


def test_the_cli_dry_run_prints_the_plan_and_asks_no_model(
    tmp_path: Path,
    fake_openai: FakeOpenAIServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "empty.toml").write_text("", encoding="utf-8")
    monkeypatch.setenv("RAG_JUDGE_CONFIG", str(tmp_path / "empty.toml"))
    args = ["sweep", "cmrc2018_zh_chunked", "--limit", "3", "--ks", "1-4", "--dry-run"]
    args += ["--model", "openai/gpt-4o-mini", "--base-url", fake_openai.base_url]
    args += ["--metrics", "faithfulness,completeness,answer_f1", "-o", str(tmp_path / "out")]
    args += ["--until-decided", "--step", "1"]
    env = {"RAG_JUDGE_CACHE_DIR": str(tmp_path / "cache"), "OPENAI_API_KEY": "test-key"}
    run = CliRunner().invoke(main, args, env=env)
    assert run.exit_code == 0, run.output
    assert "Plan: 3 questions x 4 ks = 12 answers" in run.output
    assert "each question's real top K by BM25" in run.output
    assert "best (settled at the first look)" in run.output
    assert "$" in run.output  # gpt-4o-mini is priced in litellm's bundled map
    assert fake_openai.total_calls == 0
    assert not (tmp_path / "out").exists()
