"""`rag-judge calibrate` and `run_calibration`: from files, and by judging a bundled set.

The `--run` path judges begin_dev with a scripted model (by prompt id, in process) and, through
the command line, with a fake OpenAI server over real HTTP; the notebook test runs the real
local model (slow).
"""

from __future__ import annotations

import json
import re
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fake_openai_server import FakeOpenAIServer, fake_openai  # noqa: F401

from rag_judge.backends import ModelClient
from rag_judge.backends.providers.scripted import ScriptedBackend
from rag_judge.backends.types import ChatRequest
from rag_judge.cli import main
from rag_judge.core.errors import InputError
from rag_judge.jobs.calibrate.job import parse_mapping, parse_scale, run_calibration

NOTEBOOKS = Path(__file__).parents[2] / "notebooks"

# begin_dev.limit(6), in file order: cmu-001 (0), tc-001 (1), wow-001 (1), cmu-002 (0), and two
# Generic responses (null label): cmu-003 "haha", cmu-014 "i agree.".
NO_CLAIMS = {"haha", "i agree."}
JUDGED_UNSUPPORTED = {"but i didn't watch the whole movie"}
"""The scripted judge calls every other claim supported: right on tc-001 and wow-001, wrong on
cmu-002 (human 0), right on cmu-001."""


def scripted_judge(request: ChatRequest) -> str | float:
    """Extract one claim (the whole answer), verify by the table above, P(yes) 0.9 or 0.2."""
    assert request.prompt_id is not None
    prompt, user = request.prompt_id.split(".")[0], request.messages[-1].content
    if prompt == "claims/extract":
        text = user.split("Text: ", 1)[1].strip()
        return json.dumps({"claims": [] if text in NO_CLAIMS else [text]})
    if prompt == "claims/verify":
        claims = re.findall(r"^(\d+)\. (.*)$", user.split("Claims (")[1], flags=re.M)
        verdicts = [
            {
                "claim": int(n),
                "reason": f"scripted reason {n}",
                "verdict": "not_mentioned" if text in JUDGED_UNSUPPORTED else "supported",
                "passages": [] if text in JUDGED_UNSUPPORTED else [1],
            }
            for n, text in claims
        ]
        return json.dumps({"verdicts": verdicts})
    if prompt == "claims/support":
        claim = user.split("<claim>", 1)[1].split("</claim>", 1)[0].strip()
        return 0.2 if claim in JUDGED_UNSUPPORTED else 0.9
    raise AssertionError(f"unexpected prompt {prompt}")


def test_run_calibration_with_a_scripted_judge(tmp_path: Path) -> None:
    backend = ScriptedBackend(respond=scripted_judge)
    run = run_calibration(
        "begin_dev",
        tmp_path,
        limit=6,
        client=ModelClient(backend),
        cache=False,
        support_probability=True,
        n_resamples=200,
    )
    lines = (tmp_path / "scores.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["id"] for line in lines] == [
        "cmu-001",
        "tc-001",
        "wow-001",
        "cmu-002",
        "cmu-003",
        "cmu-014",
    ]
    report = run.report
    assert (report.metric, report.kind, report.n) == ("faithfulness", "binary", 4)
    # humans [0, 1, 1, 0], judge values [0, 1, 1, 1]: caught cmu-001, missed cmu-002
    c = report.confusion
    assert c is not None
    assert (c.caught, c.missed, c.false_alarm, c.passed) == (1, 1, 0, 2)
    assert report.estimate("accuracy").estimate == pytest.approx(3 / 4)
    assert report.estimate("balanced_accuracy").estimate == pytest.approx((1 / 2 + 1) / 2)
    # supported {1, 1} vs unsupported {0, 1}: 1 + 1/2 per supported row, over 4 pairs
    assert report.estimate("roc_auc(value)").estimate == pytest.approx(3 / 4)
    # P = [0.2, 0.9, 0.9, 0.9]: (0.04 + 0.01 + 0.01 + 0.81) / 4
    assert report.estimate("brier_score(probability)").estimate == pytest.approx(0.87 / 4)
    assert report.judge_statuses == {"no_claims": 2, "ok": 4}
    assert any("2 labelled rows have no place" in n and "no_claims 2" in n for n in report.notes)
    assert [d.id for d in report.disagreements] == ["cmu-002"]
    detail = report.disagreements[0].detail
    assert detail is not None
    assert detail.claims[0].reason == "scripted reason 1"
    # extract, verify and support for each of the 4 rows with a claim; extract only for 2
    assert len(backend.requests) == 3 * 4 + 2


def test_run_calibration_refuses_unknown_sets_and_metrics(tmp_path: Path) -> None:
    client = ModelClient(ScriptedBackend(respond=scripted_judge))
    with pytest.raises(InputError, match=r"no calibration set 'nope'; bundled sets: .*begin_dev"):
        run_calibration("nope", tmp_path, client=client)
    with pytest.raises(InputError, match="unknown metric 'faithfulnes'"):
        run_calibration("begin_dev", tmp_path, metric="faithfulnes", client=client)
    assert not (tmp_path / "scores.jsonl").exists()


def test_parse_scale_and_mapping() -> None:
    assert parse_scale("1-5") == (1, 5)
    assert parse_scale(" -2 - 2 ") == (-2, 2)
    with pytest.raises(InputError, match="LOW < HIGH"):
        parse_scale("5-1")
    assert parse_mapping('{"yes": 1, "no": 0, "generic": null}') == {
        "yes": 1.0,
        "no": 0.0,
        "generic": None,
    }
    with pytest.raises(InputError, match="label → number or null"):
        parse_mapping('{"yes": "1"}')


# --- the command line, from files ------------------------------------------------------------


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def score_line(id_: str, value: float | None, status: str = "ok") -> dict[str, Any]:
    claims = [] if value is None else [{"claim": f"c {id_}", "verdict": "supported", "reason": "r"}]
    result = {"value": value, "status": status, "claims": claims}
    return {"id": id_, "answer": f"answer {id_}", "results": {"faithfulness": result}}


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    scores = write_jsonl(
        tmp_path / "scores.jsonl",
        [
            score_line("a", 1.0),
            score_line("b", 0.0),
            score_line("c", 0.5),
            score_line("d", 1.0),
            score_line("e", None, "parse_error"),
        ],
    )
    labels = write_jsonl(
        tmp_path / "labels.jsonl",
        [{"id": i, "label": y} for i, y in (("a", 1), ("b", 0), ("c", 0), ("d", 1), ("e", 0))],
    )
    return scores, labels


def invoke(*args: str) -> Any:
    return CliRunner().invoke(main, ["calibrate", *args])


def test_cli_from_files_prints_the_figures_and_writes_the_report(
    tmp_path: Path, files: tuple[Path, Path]
) -> None:
    scores, labels = files
    out = tmp_path / "report"
    result = invoke(
        "--scores", str(scores), "--labels", str(labels), "-o", str(out), "--resamples", "200"
    )
    assert result.exit_code == 0, result.output
    # judge [1, 0, 1, 1] vs humans [1, 0, 0, 1] at 0.5: 3 of 4 agree
    assert re.search(r"│ accuracy\s+│\s+0\.750 │", result.output)
    assert "faithfulness vs binary human labels: 4 compared" in result.output
    assert "Labelled but not scored: parse_error 1" in result.output
    assert "Confusion at 0.5 (human/judge): 0/0 caught 1, 0/1 missed 1" in result.output
    assert "Reading: At threshold 0.5 on 4 rows" in result.output
    written = {p.name for p in out.iterdir()}
    assert written == {
        "metrics.csv",
        "summary.md",
        "reliability.png",
        "disagreements.jsonl",
        "report.html",
    }


def test_cli_ordinal_with_a_scale_and_mapping(tmp_path: Path, files: tuple[Path, Path]) -> None:
    scores, _ = files
    labels = write_jsonl(
        tmp_path / "ratings.jsonl",
        [{"id": i, "rating": y} for i, y in (("a", "great"), ("b", "poor"), ("c", "ok"))],
    )
    result = invoke(
        "--scores",
        str(scores),
        "--labels",
        str(labels),
        "--kind",
        "ordinal",
        "--label-field",
        "rating",
        "--mapping",
        '{"poor": 1, "ok": 2, "great": 3}',
        "--scale",
        "1-3",
        "--resamples",
        "200",
    )
    assert result.exit_code == 0, result.output
    # values 1, 0, .5 map to 1 + floor(2v + .5) = 3, 1, 2: every rating matched exactly
    assert re.search(r"│ exact_agreement\(mapped\)\s+│\s+1\.000 │", result.output)
    assert "mapped onto the 1–3 scale" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--metric", "context_recall"],
            "no row has results for metric 'context_recall' (metrics found: faithfulness)",
        ),
        (["--threshold", "0.3", "--select", "f1"], "give --threshold or --select, not both"),
        (["--limit", "3"], "--limit applies to --run only"),
        (["--kind", "ordinal", "--scale", "x"], "expected LOW-HIGH"),
    ],
)
def test_cli_errors_are_one_clear_line(
    files: tuple[Path, Path], args: list[str], message: str
) -> None:
    scores, labels = files
    result = invoke("--scores", str(scores), "--labels", str(labels), *args)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_cli_no_overlap_and_missing_inputs(tmp_path: Path, files: tuple[Path, Path]) -> None:
    scores, _ = files
    other = write_jsonl(tmp_path / "other.jsonl", [{"id": "zz", "label": 1}])
    result = invoke("--scores", str(scores), "--labels", str(other))
    assert result.exit_code == 2
    assert "no id in common" in result.output
    assert "1 labelled but not in the judge output (zz)" in result.output
    result = invoke("--scores", str(scores))
    assert result.exit_code == 2
    assert "give --scores and --labels, or --run EVAL_SET" in result.output
    result = invoke("--run", "begin_dev", "--labels", str(other))
    assert result.exit_code == 2
    assert "not --labels" in result.output
    result = invoke("--run", "nope")
    assert result.exit_code == 2
    assert "error: field 'calibration_set': no calibration set 'nope'" in result.output


# --- the command line, --run over HTTP ---------------------------------------------------------


def http_judge(body: dict[str, Any]) -> str:
    """The scripted judge's replies, routed by what the system prompt asks for."""
    system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
    if '"verdicts"' in system:
        claims = re.findall(r"^(\d+)\. (.*)$", user.split("Claims (")[1], flags=re.M)
        return json.dumps(
            {
                "verdicts": [
                    {
                        "claim": int(n),
                        "reason": "r",
                        "verdict": "not_mentioned" if t in JUDGED_UNSUPPORTED else "supported",
                        "passages": [],
                    }
                    for n, t in claims
                ]
            }
        )
    text = user.split("Text: ", 1)[1].strip()
    return json.dumps({"claims": [] if text in NO_CLAIMS else [text]})


def test_cli_run_judges_the_set_and_writes_everything(
    tmp_path: Path,
    fake_openai: FakeOpenAIServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_openai.respond = http_judge
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    (tmp_path / "empty.toml").write_text("", encoding="utf-8")
    monkeypatch.setenv("RAG_JUDGE_CONFIG", str(tmp_path / "empty.toml"))
    out = tmp_path / "out"
    args = [
        "calibrate",
        "--run",
        "begin_dev",
        "--limit",
        "6",
        "-o",
        str(out),
        "--resamples",
        "200",
        "--model",
        "openai/judge",
        "--base-url",
        f"http://127.0.0.1:{fake_openai.port}/v1",
    ]
    env = {"RAG_JUDGE_CACHE_DIR": str(tmp_path / "cache")}
    result = CliRunner().invoke(main, args, env=env)
    assert result.exit_code == 0, result.output
    assert "faithfulness vs binary human labels: 4 compared" in result.output
    # no log-probabilities over this API: Brier and ECE fall back to the value, and say so
    assert "brier_score(value)" in result.output
    assert "the judge gave no support probabilities" in result.output
    assert re.search(r"│ accuracy\s+│\s+0\.750 │", result.output)
    names = {p.name for p in out.iterdir()}
    assert {"scores.jsonl", "metrics.csv", "summary.md", "report.html"} <= names
    calls = fake_openai.total_calls
    assert f"openai/judge: {calls} calls made" in result.output  # the cost, per model
    again = CliRunner().invoke(main, args, env=env)
    assert again.exit_code == 0, again.output
    assert fake_openai.total_calls == calls  # the response cache makes a re-run free
    assert "openai/judge: 0 calls made" in again.output


# --- the notebook, with the real local model --------------------------------------------------


@pytest.mark.slow
def test_calibration_notebook_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if find_spec("llama_cpp") is None:
        pytest.skip("needs rag-judge[local]")
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv("CALIBRATION_LIMIT", "2")
    monkeypatch.setenv("CALIBRATION_OUT", str(tmp_path / "out"))
    monkeypatch.setenv("RAG_JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    # The first call also loads the weights; on a busy 2-core machine that outlasts the 120 s
    # default and every row would end as a timeout, leaving nothing to calibrate.
    monkeypatch.setenv("RAG_JUDGE_TIMEOUT", "900")
    notebook = nbformat.read(NOTEBOOKS / "calibration.ipynb", as_version=4)
    client = NotebookClient(
        notebook, timeout=1800, kernel_name="python3", resources={"metadata": {"path": tmp_path}}
    )
    client.execute()

    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "\n".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "Reading: " in text
    assert any("image/png" in o.get("data", {}) for o in outputs)
    written = {p.name for p in (tmp_path / "out").iterdir()}
    assert {"scores.jsonl", "metrics.csv", "summary.md", "reliability.png", "report.html"} <= (
        written
    )
