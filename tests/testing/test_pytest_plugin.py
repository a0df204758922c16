"""The pytest plugin, run the way a user's suite runs it (pytester): a pass, a fail whose
message shows the failing claims, the session's report, and JUnit XML."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree

import pytest

from rag_judge.backends.local.weights import model_dir

pytest_plugins = ["pytester"]
MODEL_DIR = model_dir()
"""Where the embedded weights are, found before pytester moves HOME (the weights stay put)."""

CONFTEST = '''
import json

import pytest

from rag_judge.backends.wrapper.client import ModelClient
from rag_judge.backends.providers.scripted import ScriptedBackend
from rag_judge.runtime.session import open_session


def respond(request):
    """Claims are the answer; a claim is supported when its last word is in a passage."""
    user = request.messages[-1].content
    if request.prompt_id.startswith("claims/extract"):
        return json.dumps({"claims": [user.split("Text:")[-1].strip()]})
    claims = [line.split(". ", 1)[1] for line in user.splitlines() if line[:2] == "1."]
    word = claims[0].rstrip(".").split()[-1]
    supported = word in user.split("Claims")[0]
    verdict = {
        "claim": 1,
        "reason": "it is said" if supported else "no passage says where it is",
        "verdict": "supported" if supported else "not_mentioned",
        "passages": [1] if supported else [],
    }
    return json.dumps({"verdicts": [verdict]})


@pytest.fixture(scope="session")
def judge_session():
    return open_session(client=ModelClient(ScriptedBackend(respond=respond)), cache=False)
'''

TESTS = """
def test_grounded(assert_judged):
    assert_judged(
        {"id": "paris", "question": "Capital of France?",
         "contexts": ["The capital of France is Paris."], "answer": "It is Paris."},
        faithfulness=">=0.8",
    )


def test_ungrounded(assert_judged):
    assert_judged(
        {"id": "berlin", "question": "Capital of France?",
         "contexts": ["The capital of France is Paris."], "answer": "It is Berlin."},
        faithfulness=">=0.8",
    )


def test_a_bad_bound(assert_judged):
    assert_judged({"question": "q", "contexts": ["c"], "answer": "a"}, faithfulness="high")
"""


def test_pass_fail_report_and_junit(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_rag=TESTS)
    result = pytester.runpytest_inprocess("--junitxml=junit.xml", "--rag-judge-report=judged.jsonl")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*faithfulness = 0.000 does not meet faithfulness >= 0.8",
            "*- not_mentioned: It is Berlin. (reason: no passage says where it is)",
            "*rag_judge*",
            "2 judged assertions, 1 failed",
            "pass test_rag.py::test_grounded paris: faithfulness = 1.000 (want >= 0.8)",
            "FAIL test_rag.py::test_ungrounded berlin: faithfulness = 0.000 (want >= 0.8)",
        ]
    )
    assert "expected e.g. '>=0.8', got 'high'" in result.stdout.str()
    lines = (pytester.path / "judged.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["passed"] for line in lines] == [True, False]
    suite = ElementTree.parse(pytester.path / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    assert (suite.attrib["tests"], suite.attrib["failures"]) == ("3", "2")
    failure = suite.find("testcase[@name='test_ungrounded']/failure")
    assert failure is not None
    assert "It is Berlin." in (failure.attrib.get("message", "") + (failure.text or ""))


@pytest.mark.slow
def test_the_embedded_model_judges_an_assertion(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No conftest: the plugin's own session, the embedded model, judges for real."""
    monkeypatch.setenv("RAG_JUDGE_MODEL_DIR", str(MODEL_DIR))
    monkeypatch.setenv("RAG_JUDGE_CACHE_DIR", str(pytester.path / "cache"))
    monkeypatch.delenv("RAG_JUDGE_MODEL", raising=False)
    pytester.makepyfile(
        test_real="""
def test_grounded(assert_judged):
    assert_judged(
        {"question": "When was the Eiffel Tower finished?",
         "contexts": ["The Eiffel Tower was finished in 1889 for the World's Fair."],
         "answer": "The Eiffel Tower was finished in 1889."},
        faithfulness=">=0.5",
    )
"""
    )
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["pass test_real.py::test_grounded *: faithfulness = *"])
