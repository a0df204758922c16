"""The pytest plugin (entry point ``pytest11``): judge-score assertions in any test suite.

Fixtures:

- ``judge_session``: a judge session from rag_judge's settings (``--rag-judge-model``, else
  ``RAG_JUDGE_MODEL``/config, else the embedded model), with the response cache, once per test
  session. Override it in a ``conftest.py`` to judge with something else (the project's own
  tests give it a scripted backend).
- ``assert_judged``: ``assert_judged(sample, faithfulness=">=0.8")`` judges one sample with
  that session and fails the test, showing the claims and verdicts, unless every bound holds.

Every judged assertion is collected: pytest's summary gets a "rag_judge" section, and
``--rag-judge-report FILE`` writes them all as JSON Lines (test, sample, metric, value, bound,
passed). ``--junitxml`` shows the failures like any other test's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from rag_judge.core.types import RagSample
from rag_judge.runtime.session import Session
from rag_judge.testing.assertions import Judged, ajudge_expecting

_RECORDS = pytest.StashKey[list[tuple[str, Judged]]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--rag-judge-model`` and ``--rag-judge-report``."""
    group = parser.getgroup("rag_judge", "judge-score assertions (rag_judge)")
    group.addoption(
        "--rag-judge-model",
        default=None,
        help="The judge model, provider/model (default: rag_judge's settings).",
    )
    group.addoption(
        "--rag-judge-report",
        default=None,
        metavar="FILE",
        help="Write every judged assertion of the session as JSON Lines.",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Start the session's collection of judged assertions."""
    config.stash[_RECORDS] = []


@pytest.fixture(scope="session")
def judge_session(pytestconfig: pytest.Config) -> Iterator[Session]:
    """The judge session every ``assert_judged`` of the test session uses."""
    from rag_judge.runtime.session import open_session
    from rag_judge.runtime.settings import load_settings

    model = pytestconfig.getoption("--rag-judge-model")
    session = open_session(load_settings({"model": model}))
    yield session
    if session.cache is not None:
        session.cache.close()


@pytest.fixture
def assert_judged(
    judge_session: Session, request: pytest.FixtureRequest
) -> Callable[..., list[Judged]]:
    """``assert_judged(sample, faithfulness=">=0.8")``, judged with ``judge_session``."""
    import asyncio

    records = request.config.stash[_RECORDS]

    def check(sample: RagSample | Mapping[str, Any], **expected: str | float) -> list[Judged]:
        judged = asyncio.run(ajudge_expecting(sample, judge_session, **expected))
        records.extend((request.node.nodeid, j) for j in judged)
        failed = [j for j in judged if not j.passed]
        if failed:
            pytest.fail("\n".join(j.explain() for j in failed), pytrace=False)
        return judged

    return check


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """One line per judged assertion, and the report file when asked for."""
    records = config.stash.get(_RECORDS, [])
    if not records:
        return
    failed = sum(not j.passed for _, j in records)
    terminalreporter.section("rag_judge")
    terminalreporter.line(f"{len(records)} judged assertions, {failed} failed")
    for nodeid, judged in records:
        value = "—" if judged.result.value is None else f"{judged.result.value:.3f}"
        mark = "pass" if judged.passed else "FAIL"
        terminalreporter.line(
            f"{mark} {nodeid} {judged.sample_id}: {judged.result.metric} = "
            f"{value} (want {judged.expectation.op} {judged.expectation.bound:g})"
        )
    if (path := config.getoption("--rag-judge-report")) is not None:
        from rag_judge.runtime.atomic import write_lines

        write_lines(Path(path), (json.dumps(_record(n, j), ensure_ascii=False) for n, j in records))
        terminalreporter.line(f"written: {path}")


def _record(nodeid: str, judged: Judged) -> dict[str, Any]:
    return {
        "test": nodeid,
        "sample": judged.sample_id,
        "metric": judged.result.metric,
        "value": judged.result.value,
        "status": judged.result.status,
        "op": judged.expectation.op,
        "bound": judged.expectation.bound,
        "passed": judged.passed,
    }
