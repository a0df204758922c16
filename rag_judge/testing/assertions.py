"""Judge-score assertions for test suites: ``assert_judged(sample, faithfulness=">=0.8")``.

The pytest plugin (:mod:`rag_judge.testing.pytest_plugin`) gives them as a fixture bound to a
configured judge session and collects every result into one report per test session; this
module is the assertion itself, usable without pytest. A failure says which metric missed its
bound and shows the claims with their verdicts, probabilities and reasons, so the test log
tells why, not only that.
"""

from __future__ import annotations

import asyncio
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rag_judge.core.errors import InputError
from rag_judge.core.types import JudgeResult, RagSample
from rag_judge.runtime.session import Session

_OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
    "==": operator.eq,
}
_EXPECTATION = re.compile(r"^\s*(>=|<=|==|>|<)?\s*([0-9]*\.?[0-9]+)\s*$")


@dataclass(frozen=True)
class Expectation:
    """A bound on one metric: ``>= 0.8``; a bare number means ``>=``."""

    metric: str
    op: str
    bound: float

    def holds(self, value: float) -> bool:
        """True when ``value`` meets the bound."""
        return _OPERATORS[self.op](value, self.bound)

    def __str__(self) -> str:
        return f"{self.metric} {self.op} {self.bound:g}"


@dataclass(frozen=True)
class Judged:
    """One metric of one assertion: its result and whether it met its expectation."""

    sample_id: str
    expectation: Expectation
    result: JudgeResult

    @property
    def passed(self) -> bool:
        """Scored and within the bound (an unscored result never passes)."""
        value = self.result.value
        return value is not None and self.expectation.holds(value)

    def explain(self) -> str:
        """Why it failed (or what passed), with the claims and verdicts behind the value."""
        found = self.result
        if found.value is None:
            head = f"{found.metric} was not scored: {found.status}" + (
                f" ({found.error})" if found.error else ""
            )
        else:
            word = "meets" if self.passed else "does not meet"
            head = f"{found.metric} = {found.value:.3f} {word} {self.expectation}"
        lines = [head]
        for claim in found.claims:
            p = "" if claim.support_probability is None else f" ({claim.support_probability:.2f})"
            reason = f" (reason: {claim.reason})" if claim.reason else ""
            lines.append(f"  - {claim.verdict or 'no verdict'}{p}: {claim.claim}{reason}")
        return "\n".join(lines)


def parse_expectations(expected: Mapping[str, str | float]) -> list[Expectation]:
    """``{"faithfulness": ">=0.8"}`` as expectations (numbers in [0, 1]).

    Raises:
        InputError: none given, or one that is not an operator and a number in [0, 1].
    """
    if not expected:
        raise InputError("name at least one metric and its bound, e.g. metric='>=0.8'")
    out = []
    for metric, raw in expected.items():
        match = _EXPECTATION.match(str(raw))
        if match is None:
            raise InputError(f"expected e.g. '>=0.8', got {raw!r}", field=metric)
        bound = float(match.group(2))
        if not 0.0 <= bound <= 1.0:
            raise InputError(f"the bound must be in [0, 1], got {bound}", field=metric)
        out.append(Expectation(metric, match.group(1) or ">=", bound))
    return out


async def ajudge_expecting(
    sample: RagSample | Mapping[str, Any], session: Session, **expected: str | float
) -> list[Judged]:
    """Judge one sample on the metrics named in ``expected`` and say how each fared."""
    from rag_judge.jobs.score.run import aevaluate

    expectations = parse_expectations(expected)
    row = sample if isinstance(sample, RagSample) else dict(sample)
    result = await aevaluate(
        [row],
        [e.metric for e in expectations],
        settings=session.settings,
        client=session.client,
        cache=session.cache is not None,
    )
    (judged,) = result.samples
    return [Judged(judged.sample.id, e, judged.results[e.metric]) for e in expectations]


def assert_judged(
    sample: RagSample | Mapping[str, Any], *, session: Session, **expected: str | float
) -> list[Judged]:
    """Judge ``sample`` and raise AssertionError, with the claims, unless every bound holds.

    >>> import json
    >>> from rag_judge.backends.wrapper.client import ModelClient
    >>> from rag_judge.backends.providers.scripted import ScriptedBackend
    >>> from rag_judge.runtime.session import open_session
    >>> verdict = {"claim": 1, "reason": "said", "verdict": "supported", "passages": [1]}
    >>> replies = ['{"claims": ["Paris is the capital."]}', json.dumps({"verdicts": [verdict]})]
    >>> session = open_session(client=ModelClient(ScriptedBackend(replies)), cache=False)
    >>> row = {"question": "Capital of France?", "contexts": ["Paris is."], "answer": "Paris."}
    >>> [judged] = assert_judged(row, session=session, faithfulness=">=0.8")
    >>> judged.result.value
    1.0
    """
    judged = asyncio.run(ajudge_expecting(sample, session, **expected))
    failed = [j for j in judged if not j.passed]
    if failed:
        raise AssertionError("\n".join(j.explain() for j in failed))
    return judged
