"""Exact match and F1 against reference answers: SQuAD v1.1's and CMRC 2018's normalisations,
the best over several references, and the judges that put them in every job with no model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from rag_judge.backends.providers.scripted import ScriptedBackend
from rag_judge.backends.wrapper.client import ModelClient
from rag_judge.cli import main
from rag_judge.core.types import RagSample
from rag_judge.jobs.score.run import evaluate
from rag_judge.judges.reference_match import (
    best_match,
    cmrc_exact,
    cmrc_f1,
    cmrc_segments,
    squad_exact,
    squad_f1,
    squad_normalise,
)

OFFICIAL = Path(__file__).parents[1] / "fixtures" / "reference_match_official.jsonl"


@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ("The Denver Broncos", "denver broncos"),
        ("  an  apple, a day!  ", "apple day"),
        ("U.S.A.", "usa"),
        ("the theory", "theory"),  # "the" as a word only
        ("Rock 'n' Roll", "rock n roll"),
        ("$10.4 billion", "104 billion"),  # the official script drops the point too
        ("naïve café", "naïve café"),
    ],
)
def test_squad_normalisation(text: str, normalised: str) -> None:
    assert squad_normalise(text) == normalised


def test_squad_f1_is_over_bags_of_tokens() -> None:
    assert squad_f1("Denver Broncos", "The Denver Broncos") == 1.0
    # 1 shared token of 3 predicted and 1 true: P = 1/3, R = 1, F1 = 0.5.
    assert squad_f1("capital is Paris", "Paris") == pytest.approx(0.5)
    assert squad_f1("Broncos Broncos", "Broncos") == pytest.approx(2 * 0.5 / 1.5)  # counts clip
    assert squad_f1("", "Paris") == 0.0
    assert squad_exact("the Broncos!", "Broncos")
    assert not squad_exact("Broncos", "Denver Broncos")


@pytest.mark.parametrize(
    ("text", "segments"),
    [
        ("光荣和ω-force", ["光", "荣", "和", "ωforce"]),  # "-" is on the script's list
        ("iPhone 15发售", ["iphone", "15", "发", "售"]),
        ("《周刊少年Jump》", ["周", "刊", "少", "年", "jump"]),
        ("10.48%", ["10.48", "%"]),  # ASCII % is not on the list: a Treebank token
        ("don't", ["do", "n't"]),
        ("“M-Touch”机", ["mtouch", "机"]),
    ],
)
def test_cmrc_segments_split_chinese_by_character_and_latin_by_treebank(
    text: str, segments: list[str]
) -> None:
    assert cmrc_segments(text) == segments


def test_cmrc_f1_is_the_longest_common_substring() -> None:
    # Common substring 光荣和ωforce (4 segments) of 6 predicted and 4 true: P = 2/3, R = 1.
    assert cmrc_f1("光荣和ω-force公司", "光荣和ω-force") == pytest.approx(0.8)
    # The same characters in another order share only runs: 北京 (2 of 4).
    assert cmrc_f1("京北上海", "北京上海") == pytest.approx(0.5)
    assert cmrc_f1("", "北京") == 0.0


def test_cmrc_exact_drops_the_scripts_punctuation_but_keeps_spaces() -> None:
    assert cmrc_exact("《光荣》。", "光荣")
    assert cmrc_exact("ω-FORCE", "ωforce")
    assert not cmrc_exact("iphone 15", "iphone15")  # white space inside is kept, as official


def test_the_best_reference_counts() -> None:
    exact, f1, details = best_match("Denver Broncos", ["Broncos", "the Denver Broncos"], "en")
    assert (exact, f1, details) == (True, 1.0, {"rules": "squad_v1.1", "best_reference": 1})
    exact, f1, details = best_match("光荣", ["任天堂", "光荣公司"], "zh")
    assert not exact
    assert f1 == pytest.approx(2 * 1 * 0.5 / 1.5)
    assert details == {"rules": "cmrc2018", "best_reference": 1}


def test_values_equal_the_official_scripts_on_their_sample() -> None:
    # Written by benchmarks/reference_match_official.py: every row scored by the official
    # evaluate-v1.1.py (SQuAD) and cmrc2018_evaluate.py (CMRC 2018) functions themselves.
    rows = [json.loads(line) for line in OFFICIAL.read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 400
    for row in rows:
        exact, f1, _ = best_match(row["prediction"], row["references"], row["language"])
        assert (float(exact), f1) == (row["official_em"], pytest.approx(row["official_f1"])), row


def test_score_reports_both_with_no_model_call_and_needs_a_reference() -> None:
    rows = [
        RagSample(id="a", question="Who?", answer="The Denver Broncos", reference="Broncos",
                  references=("Denver Broncos",), contexts=("x",)),
        RagSample(id="b", question="谁？", answer="光荣", reference="光荣公司", contexts=("x",)),
        RagSample(id="c", question="Who?", answer="Paris", contexts=("x",)),
    ]  # fmt: skip
    backend = ScriptedBackend(respond=lambda request: pytest.fail("no model call expected"))
    result = evaluate(rows, ["exact_match", "answer_f1"], client=ModelClient(backend), cache=False)
    by_id = {s.sample.id: s.results for s in result.samples}
    assert by_id["a"]["exact_match"].value == 1.0
    assert by_id["a"]["answer_f1"].value == 1.0
    assert by_id["b"]["exact_match"].value == 0.0
    assert by_id["b"]["answer_f1"].value == pytest.approx(2 / 3)  # 2 of 2 and 2 of 4 characters
    assert by_id["c"]["exact_match"].status == "missing_input"
    assert backend.requests == []


def _score(tmp_path: Path, name: str, rows: list[dict[str, object]]) -> Path:
    source, out = tmp_path / f"{name}.rows.jsonl", tmp_path / f"{name}.jsonl"
    source.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    args = ["score", str(source), "-o", str(out), "--metrics", "exact_match,answer_f1"]
    run = CliRunner().invoke(main, args, env={"RAG_JUDGE_CACHE_DIR": str(tmp_path / "cache")})
    assert run.exit_code == 0, run.output
    return out


ROWS = [
    {"id": "1", "question": "Who?", "answer": "Koei and Omega Force",
     "reference": "Koei and Omega Force", "contexts": ["x"]},
    {"id": "2", "question": "谁开发的？", "answer": "光荣和ω-force", "reference": "光荣和ω-force",
     "contexts": ["x"]},
    {"id": "3", "question": "When?", "answer": "in 2010", "reference": "2010",
     "references": ["in 2010"], "contexts": ["x"]},
]  # fmt: skip


def test_compare_scores_and_calibrate_take_them_and_show_the_answers(tmp_path: Path) -> None:
    base = _score(tmp_path, "base", ROWS)
    worse = [dict(ROWS[0], answer="Koei"), dict(ROWS[1], answer="光荣"), ROWS[2]]
    new = _score(tmp_path, "new", worse)
    compared = CliRunner().invoke(main, ["compare-scores", str(base), str(new)])
    assert compared.exit_code == 0, compared.output
    assert "| exact_match | 3 | 1.000 | 0.333 |" in compared.output
    assert "| answer | 光荣和ω-force | 光荣 |" in compared.output  # no claims: the answers
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"id": "1", "label": 0}\n{"id": "2", "label": 0}\n{"id": "3", "label": 1}\n')
    args = ["calibrate", "--scores", str(new), "--labels", str(labels), "--metric", "answer_f1"]
    calibrated = CliRunner().invoke(main, [*args, "--resamples", "50"])
    assert calibrated.exit_code == 0, calibrated.output
    assert "answer_f1" in calibrated.output
