"""Gate checks as JUnit XML, the format CI systems (GitHub Actions reporters, GitLab, Jenkins)
show as test results: one test case per check, a ``<failure>`` with its figures when it fails.

>>> from rag_judge.jobs.compare_scores.gate import Check
>>> print(junit_xml([Check("faithfulness mean >= 0.800", False, "mean 0.700")], suite="gate"))
<?xml version="1.0" encoding="utf-8"?>
<testsuites tests="1" failures="1">
  <testsuite name="gate" tests="1" failures="1" errors="0" skipped="0">
    <testcase classname="rag_judge.gate" name="faithfulness mean &gt;= 0.800">
      <failure message="mean 0.700">mean 0.700</failure>
    </testcase>
  </testsuite>
</testsuites>
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from xml.etree import ElementTree

from rag_judge.jobs.compare_scores.gate import Check
from rag_judge.runtime.atomic import write_lines


def junit_xml(checks: Sequence[Check], *, suite: str = "rag_judge gate") -> str:
    """The checks as one JUnit test suite."""
    failures = str(sum(not c.passed for c in checks))
    root = ElementTree.Element("testsuites", tests=str(len(checks)), failures=failures)
    node = ElementTree.SubElement(
        root,
        "testsuite",
        name=suite,
        tests=str(len(checks)),
        failures=failures,
        errors="0",
        skipped="0",
    )
    for check in checks:
        case = ElementTree.SubElement(node, "testcase", classname="rag_judge.gate", name=check.name)
        if not check.passed:
            ElementTree.SubElement(case, "failure", message=check.message).text = check.message
        else:
            ElementTree.SubElement(case, "system-out").text = check.message
    ElementTree.indent(root)
    body = ElementTree.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="utf-8"?>\n' + body


def write_junit(path: Path, checks: Sequence[Check]) -> Path:
    """Write :func:`junit_xml` to ``path`` atomically."""
    return write_lines(path, junit_xml(checks).splitlines())
