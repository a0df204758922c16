"""The k-sweep's report files, from a real sweep of the toy set with the scripted model.

The sweep is ``test_sweep.toy_sweep``: q1 (France) ranks d2#0, d1#0 (Paris), d1#1, d3#0 and
answers "I do not know." at k = 1 (no claims), "The capital is Paris." from k = 2; q2 (Japan)
ranks d3#0 (Tokyo) first and answers "The capital is Tokyo." at every k. Every expected
value below follows from that.
"""

from __future__ import annotations

import base64
import csv
import dataclasses
import io
import json
import re
from pathlib import Path

import markupsafe
import pandas as pd
import pyarrow.parquet as pq
import pytest
from matplotlib import image
from sweep_toy import QUERIES, RESAMPLES, TOY, toy_sweep

from rag_judge.backends.wrapper.ledger import Ledger
from rag_judge.core.errors import InputError
from rag_judge.core.types import Usage
from rag_judge.jobs.sweep import SweepResult
from rag_judge.jobs.sweep.decision import decide
from rag_judge.jobs.sweep.decision.objective import Objective, ObjectiveChoice, choose_objective
from rag_judge.jobs.sweep.plan import NO_REFERENCE
from rag_judge.report.sweep_html import cost_totals, worst_cases
from rag_judge.report.sweep_models import models_sentence, self_judging_warning
from rag_judge.report.sweep_report import (
    FILES,
    SweepReport,
    render_summary_markdown,
    with_objective,
    write_sweep_report,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

NO_EMBEDDER_TEXT = "no embedder given (answer relevancy embeds the reverse questions)"


@pytest.fixture(scope="module")
def toy() -> SweepResult:
    return toy_sweep()[0]


@pytest.fixture(scope="module")
def free() -> SweepResult:
    """The toy set without reference answers (like Cranfield): only faithfulness runs."""
    reference_free = dataclasses.replace(
        TOY,
        queries=tuple(dataclasses.replace(q, answers=()) for q in QUERIES),
        has_reference_answers=False,
        not_applicable={"completeness": "no reference answers"},
    )
    return toy_sweep(reference_free, embed=False)[0]


@pytest.fixture(scope="module")
def written(toy: SweepResult, tmp_path_factory: pytest.TempPathFactory) -> SweepReport:
    out = tmp_path_factory.mktemp("report") / "nested" / "toy"
    return write_sweep_report(toy, out, title="Toy set, fixed ranking", n_resamples=RESAMPLES)


def test_every_file_is_written_and_not_empty(written: SweepReport) -> None:
    assert written.out_dir.is_dir()
    assert sorted(p.name for p in written.out_dir.iterdir()) == sorted(FILES)
    assert [p.name for p in written.paths] == list(FILES)
    assert all(p.stat().st_size > 0 for p in written.paths)


def test_per_question_round_trips_and_missing_values_stay_missing(
    toy: SweepResult, written: SweepReport
) -> None:
    frame = toy.per_question
    pd.testing.assert_frame_equal(pd.read_parquet(written.parquet_path), frame)
    table = pq.read_table(written.parquet_path)
    assert table.column("faithfulness").null_count == 1  # q1 at k = 1: no claims
    assert table.column("doc_recall").null_count == 0

    text = written.csv_path.read_text(encoding="utf-8")
    assert "nan" not in text.lower()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(r["question_id"], r["k"]) for r in rows] == [
        (q, str(k)) for q in ("q1", "q2") for k in (1, 2, 3, 4)
    ]
    assert (rows[0]["faithfulness"], rows[0]["faithfulness_status"]) == ("", "no_claims")
    back = pd.read_csv(
        written.csv_path,
        dtype={str(c): str(t) for c, t in frame.dtypes.items()},
    )
    pd.testing.assert_frame_equal(back, frame)


def test_summary_csv_is_the_sweep_summary(toy: SweepResult, written: SweepReport) -> None:
    expected = toy.summary(n_resamples=RESAMPLES)
    back = pd.read_csv(
        written.summary_path,
        dtype={"mean": "Float64", "ci_low": "Float64", "ci_high": "Float64"},
    )
    pd.testing.assert_frame_equal(back, expected, check_dtype=False)
    # 4 ks x (11 retrieval measures + 4 judges + 2 reference matches + 3 refusal shares)
    assert len(back) == 4 * 20
    refusals = back[(back.metric == "refusal_rate")]
    assert refusals["mean"].tolist() == [0.5, 0.0, 0.0, 0.0]  # q1 refuses at k = 1


def test_the_plot_is_a_png_of_the_figure_size_without_a_software_tag(
    written: SweepReport,
) -> None:
    data = written.plot_path.read_bytes()
    assert data.startswith(PNG_MAGIC)
    assert image.imread(written.plot_path).shape == (460, 1500, 4)  # 15 x 4.6 inches at 100 dpi
    assert b"Software" not in data
    assert b"matplotlib" not in data


def test_the_html_is_self_contained_and_says_everything(
    toy: SweepResult, written: SweepReport
) -> None:
    html = written.html_path.read_text(encoding="utf-8")
    assert str(markupsafe.escape(written.decision.sentence)) in html
    assert "<h2>The decision: Undecided between k = 1, 2, 3, 4</h2>" in html
    for metric in toy.value_columns:
        assert f"<th>{metric}</th>" in html
    embedded = re.search(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert embedded is not None
    assert base64.b64decode(embedded.group(1)) == written.plot_path.read_bytes()
    assert "http://" not in html
    assert "https://" not in html
    assert "<script" not in html
    assert "<link" not in html
    # q1's refusal at k = 1 has no claims: faithfulness left unscored, said why.
    assert "<h3>faithfulness: no_claims 1</h3>" in html
    assert "<td>the answer makes no factual claim</td>" in html
    # Context recall checks "Paris" against the top K once: d1#0 at rank 2 supports it,
    # which is beyond the top 1, so q1 at k = 1 scores 0 (its worst case).
    assert "<td>d1#0 (rank 2, beyond k=1)</td>" in html
    tables = re.findall(r"<h3>(.*?): mean, 95% CI and questions scored, per k</h3>", html)
    assert tables == [
        "Retrieval by document id",
        "Retrieval by answer text",
        "Generation",
        "Refusals",
    ]
    assert "<th>refused, answer in top k</th>" in html
    assert 'class="best"' not in html  # two questions recommend nothing: no k is marked
    assert toy.ledger is not None
    calls = toy.ledger.summary()["scripted/test"]["calls"]
    assert f'<td>scripted/test</td><td class="num">{calls}</td>' in html
    totals = cost_totals(toy.per_question)
    assert totals["calls"] == int(toy.per_question["calls"].sum())
    assert f"Summed over the rows: {totals['calls']} model calls" in html


def test_the_html_escapes_every_text(toy: SweepResult, tmp_path: Path) -> None:
    frame = toy.per_question.copy()
    frame.loc[frame.question_id == "q1", "answer"] = "I <b>do not</b> know & care."
    hostile = dataclasses.replace(
        toy,
        per_question=frame,
        questions={**toy.questions, "q1": "<script>alert('x')</script> France?"},
        uncovered={"q1": "no <chunk> covers it"},
        skipped={"context_precision": "needs <reference>"},
    )
    report = write_sweep_report(hostile, tmp_path, n_resamples=RESAMPLES)
    html = report.html_path.read_text(encoding="utf-8")
    assert "<script" not in html
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; France?" in html
    assert "I &lt;b&gt;do not&lt;/b&gt; know &amp; care." in html
    assert "<td>no &lt;chunk&gt; covers it</td>" in html
    assert "<td>context_precision</td><td>needs &lt;reference&gt;</td>" in html


def test_the_markdown_names_the_best_k_and_tabulates_the_means(toy: SweepResult) -> None:
    chosen = choose_objective(toy)
    default = Objective.parse("faithfulness*completeness")
    assert chosen == ObjectiveChoice(default, default)
    decision = decide(toy, n_resamples=RESAMPLES)
    summary = with_objective(toy, toy.summary(n_resamples=RESAMPLES), chosen.used)
    text = render_summary_markdown(toy, summary, decision, title="Toy")
    lines = text.splitlines()
    assert lines[0] == "# Toy"
    assert (
        "**Undecided between k = 1, 2, 3, 4** by `faithfulness*completeness` (margin 0.05, "
        "95% confidence, each of the 4 ks compared with the best, 2 of 2 questions)."
    ) in lines
    assert decision.sentence.replace("*", r"\*") in lines
    head = lines.index("## The decision per k") + 2
    assert lines[head].startswith(
        "| k | `faithfulness*completeness` | k − best of the others [95% bounds]"
    )
    # q1 refuses at k = 1: 0, counted (not left out); q2 scores 1; the mean is 0.5.
    assert lines[head + 2].startswith("| 1 | 0.500 | -0.500 [")
    assert lines[head + 3].startswith("| 2 | 1.000 | +0.000 [-1.000, +1.000] | 1.000 |")
    table = lines.index("## Mean per k") + 4
    assert lines[table : table + 6] == [
        "| k | `faithfulness*completeness` | doc_recall | doc_ndcg | text_recall "
        "| text_joint_recall | faithfulness | answer_relevancy | completeness | exact_match "
        "| answer_f1 | context_recall |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        # k = 1: only q2 finds its document; q1's faithfulness is unscored (no claims), so
        # faithfulness averages q2 alone, while the product counts q1's refusal as 0;
        # relevancy is the scripted cosine. "The capital is Tokyo." against "Tokyo": exact
        # match 0, SQuAD F1 2(1/3)(1)/(4/3) = 0.5; q1's "I do not know." scores 0 on both.
        "| 1 | 0.500 | 0.500 | 0.500 | 0.500 | 0.500 | 1.000 | 0.612 | 0.500 | 0.000 "
        "| 0.250 | 0.500 |",
        # k >= 2: nDCG = (1/log2(3) + 1) / 2 = 0.815 (q1's document at rank 2).
        "| 2 | 1.000 | 1.000 | 0.815 | 1.000 | 1.000 | 1.000 | 0.612 | 1.000 | 0.000 | 0.500 "
        "| 1.000 |",
        "| 3 | 1.000 | 1.000 | 0.815 | 1.000 | 1.000 | 1.000 | 0.612 | 1.000 | 0.000 | 0.500 "
        "| 1.000 |",
        "| 4 | 1.000 | 1.000 | 0.815 | 1.000 | 1.000 | 1.000 | 0.612 | 1.000 | 0.000 | 0.500 "
        "| 1.000 |",
    ]
    assert "## Not applicable\n\n- none\n" in text
    assert all(f"- `{name}`: " in text for name in FILES)
    # The cost, per model from the ledger: an embedder's requests are not chat calls.
    assert toy.ledger is not None
    tally = toy.ledger.models["scripted/test"]
    assert "Cost, per model (the client's ledger):" in lines
    assert (
        f"- scripted/test: {tally.calls} calls made, {tally.cached} answered from the cache; "
        f"{tally.prompt_tokens} prompt + {tally.completion_tokens} completion tokens"
    ) in lines
    assert sum(line.startswith("- scripted/") for line in lines) == len(toy.ledger.models)


def test_the_cost_keeps_the_embedder_apart_from_the_chat_model(toy: SweepResult) -> None:
    # As in `make demo`: chat calls and embedding requests share one ledger. Their sum was
    # once printed as "33 model calls" beside the CLI's "30 made" for the chat model alone.
    ledger = Ledger()
    done = {"status": "ok", "attempts": 1, "seconds": 0.1}
    for _ in range(3):
        ledger.record(
            "local/qwen", usage=Usage(prompt_tokens=100, completion_tokens=5), cached=False, **done
        )  # type: ignore[arg-type]
    ledger.record("local/qwen", usage=Usage(), cached=True, **done)  # type: ignore[arg-type]
    ledger.record("local/minilm", usage=Usage(reported=False), cached=False, **done)  # type: ignore[arg-type]
    chosen = choose_objective(toy)
    summary = with_objective(toy, toy.summary(n_resamples=RESAMPLES), chosen.used)
    decision = decide(toy, n_resamples=RESAMPLES)
    text = render_summary_markdown(dataclasses.replace(toy, ledger=ledger), summary, decision)
    assert (
        "Cost, per model (the client's ledger):\n\n"
        "- local/qwen: 3 calls made, 1 answered from the cache; 300 prompt + 15 completion "
        "tokens\n"
        "- local/minilm: 1 call made, 0 answered from the cache; tokens not reported\n"
    ) in text


def test_a_reference_free_set_falls_back_to_faithfulness_and_says_why(
    free: SweepResult, tmp_path: Path
) -> None:
    chosen = choose_objective(free)
    assert (str(chosen.requested), str(chosen.used)) == (
        "faithfulness*completeness",
        "faithfulness",
    )
    assert "completeness was skipped: no reference answers" in chosen.note
    report = write_sweep_report(free, tmp_path, n_resamples=RESAMPLES)
    assert report.objective == chosen
    found = report.decision.recommendation
    assert found is not None
    # q1 refuses at k = 1 (0), faithful elsewhere (1.0): the best by mean is k = 2
    assert found.best_k_by_mean == 2
    text = report.markdown_path.read_text(encoding="utf-8")
    assert "by `faithfulness` (margin 0.05" in text
    assert "> The objective faithfulness\\*completeness cannot be computed" in text
    assert "- completeness: no reference answers" in text
    assert f"- context_recall: {NO_REFERENCE}" in text
    assert f"- answer_relevancy: {NO_EMBEDDER_TEXT}" in text
    html = report.html_path.read_text(encoding="utf-8")
    assert str(markupsafe.escape(chosen.note)) in html
    assert "<td>completeness</td><td>no reference answers</td>" in html


def test_an_asked_objective_is_used_checked_or_replaced(free: SweepResult) -> None:
    ndcg = Objective.parse("doc_ndcg")
    assert choose_objective(free, "doc_ndcg") == ObjectiveChoice(ndcg, ndcg)
    with pytest.raises(InputError, match="unknown metric 'faithfullness'"):
        choose_objective(free, "faithfullness")
    missing = choose_objective(free, "text_recall")  # no references: no text measures
    assert str(missing.used) == "faithfulness"
    assert "text_recall was not measured" in missing.note


def test_without_any_value_there_is_no_best_k_and_the_report_still_writes(
    free: SweepResult, tmp_path: Path
) -> None:
    frame = free.per_question.copy()
    frame["faithfulness"] = pd.array([None] * len(frame), dtype="Float64")
    frame["doc_ndcg"] = pd.array([None] * len(frame), dtype="Float64")
    empty = dataclasses.replace(free, per_question=frame)
    chosen = choose_objective(empty)
    assert chosen.used is None  # completeness skipped, and no fallback has a value
    assert chosen.note.endswith("has a value: no k.")
    report = write_sweep_report(empty, tmp_path, n_resamples=RESAMPLES)
    assert report.decision.recommended_k is None
    assert report.decision.headline == "No k"
    markdown = report.markdown_path.read_text(encoding="utf-8")
    assert "**No k**: no objective could be compared across the ks." in markdown
    assert "<h2>The decision: No k</h2>" in report.html_path.read_text(encoding="utf-8")
    assert json.loads(report.decision_path.read_text())["recommended_k"] is None
    assert report.plot_path.read_bytes().startswith(PNG_MAGIC)
    # An objective whose judge ran but scored nothing is not replaced by a fallback.
    measured = choose_objective(empty, "faithfulness")
    assert str(measured.used) == "faithfulness"
    decided = decide(empty, "faithfulness", n_resamples=RESAMPLES)
    assert decided.recommended_k is None
    # the one question with values is a refusal at every k; the other has none at any k
    assert decided.sentence.startswith("Every answer to an answerable question was a refusal")
    assert "1 of 2 questions had no value at any k" in decided.sentence


def test_worst_cases_are_the_lowest_values_or_the_highest_when_lower_is_better(
    toy: SweepResult,
) -> None:
    cases = worst_cases(toy, "completeness", 2)
    # q1 at k = 1 answers nothing: 0; then the ties at 1.0 in (question, k) order.
    assert [(c.question_id, c.k, c.value) for c in cases] == [
        ("q1", 1, "0.000"),
        ("q1", 2, "1.000"),
    ]
    assert cases[0].question == "What is the capital of France?"
    assert [(c.claim, c.verdict, c.chunks) for c in cases[0].claims] == [
        ("Paris", "not_mentioned", "")
    ]
    frame = toy.per_question.assign(
        noise_sensitivity=toy.per_question["completeness"],
        noise_sensitivity_status="ok",
    )
    noisy = dataclasses.replace(toy, per_question=frame, metrics=("noise_sensitivity",))
    assert [(c.question_id, c.k) for c in worst_cases(noisy, "noise_sensitivity", 1)] == [("q1", 2)]


def test_writing_twice_gives_the_same_bytes(toy: SweepResult, tmp_path: Path) -> None:
    first = write_sweep_report(toy, tmp_path / "a", title="Toy", n_resamples=RESAMPLES)
    again = write_sweep_report(toy, tmp_path / "b", title="Toy", n_resamples=RESAMPLES)
    for one, other in zip(first.paths, again.paths, strict=True):
        if one.suffix != ".parquet":
            assert one.read_bytes() == other.read_bytes(), one.name
    pd.testing.assert_frame_equal(
        pd.read_parquet(first.parquet_path), pd.read_parquet(again.parquet_path)
    )


def test_the_report_names_generator_and_judge_and_warns_when_they_are_one(
    toy: SweepResult, written: SweepReport, tmp_path: Path
) -> None:
    summary = written.markdown_path.read_text(encoding="utf-8")
    assert "Generator `scripted/test`, judge `scripted/test`, k = 1, 2, 3, 4" in summary
    assert "> **Warning:** The generator scripted/test also judged its own answers" in summary
    html = written.html_path.read_text(encoding="utf-8")
    assert "Generator <code>scripted/test</code> · judge <code>scripted/test</code>" in html
    assert "<strong>Warning:</strong> The generator scripted/test also judged" in html
    apart = dataclasses.replace(toy, generator="local/writer")
    report = write_sweep_report(apart, tmp_path / "apart", n_resamples=RESAMPLES)
    text = report.markdown_path.read_text(encoding="utf-8")
    assert "Generator `local/writer`, judge `scripted/test`" in text
    assert "Warning" not in text
    assert "Warning" not in report.html_path.read_text(encoding="utf-8")
    external = toy.per_question.assign(answer_source="external")
    theirs = dataclasses.replace(toy, per_question=external)
    assert self_judging_warning(theirs) is None
    assert models_sentence(theirs).startswith("Generator `external (your RAG's answers)`")


def test_the_decision_comes_from_the_result_without_a_report(
    toy: SweepResult, written: SweepReport, tmp_path: Path
) -> None:
    decision = decide(toy, n_resamples=RESAMPLES)
    assert decision.to_json() == written.decision.to_json()
    assert json.loads(written.decision_path.read_text(encoding="utf-8")) == decision.to_json()
    assert decision.objective == written.objective
    assert list(tmp_path.iterdir()) == []  # deciding wrote nothing
    by_faithfulness = decide(toy, "faithfulness", n_resamples=RESAMPLES)
    rendered = write_sweep_report(toy, tmp_path / "r", decision=by_faithfulness)
    assert str(rendered.objective.used) == "faithfulness"  # the report renders the given decision
    with pytest.raises(InputError, match="an objective or a decision, not both"):
        write_sweep_report(toy, tmp_path / "r2", objective="faithfulness", decision=decision)


def test_the_recommended_row_is_bold_in_the_markdown_not_escaped() -> None:
    rows = [
        {"question_id": f"q{i}", "k": k, "answer": "A", "generation_status": "ok",
         "answer_f1": float(k == 2 or i % 3 > 0), "calls": 1, "prompt_tokens": 100 * k,
         "completion_tokens": 2}
        for i in range(60) for k in (1, 2)
    ]  # fmt: skip
    frame = pd.DataFrame(rows).astype({"answer_f1": "Float64"})
    result = SweepResult(
        per_question=frame, ks=(1, 2), metrics=("answer_f1",),
        objective=Objective.parse("answer_f1"),
    )  # fmt: skip
    decision = decide(result, n_resamples=RESAMPLES)
    assert decision.recommended_k == 2
    summary = result.summary(n_resamples=RESAMPLES)
    text = render_summary_markdown(result, summary, decision, title="Bold")
    assert "\n| **2** | 1.000 |" in text
    assert r"\*\*2" not in text
