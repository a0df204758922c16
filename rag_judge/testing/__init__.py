"""Judge scores in test suites: ``assert_judged`` and the pytest plugin that binds it to a
configured judge session (:mod:`rag_judge.testing.pytest_plugin`)."""

from rag_judge.testing.assertions import Expectation, Judged, assert_judged, parse_expectations

__all__ = ["Expectation", "Judged", "assert_judged", "parse_expectations"]
