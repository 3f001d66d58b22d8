"""JUnit XML for ``vakaudit check --junit``: one test case per compared metric, deterministic bytes.

The shape is the one Jenkins, GitLab CI, GitHub Actions reporters and Azure Pipelines read:
``<testsuites>`` holding one ``<testsuite>`` whose ``<testcase classname name time>`` elements carry a
``<failure message type>`` when the metric regressed. No timestamps, so the same result gives the same
file. No I/O here.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from vakaudit.gates.compare import CheckResult, CheckRow

SUITE_NAME = "vakaudit check"


def _text(row: CheckRow) -> str:
    lines = [
        f"metric: {row.metric}",
        f"baseline: {row.baseline}",
        f"current: {row.current}",
        f"change: {row.change or 'none'}",
        f"bound: {row.bound}",
    ]
    if row.cause:
        lines.append(f"cause: {row.cause}")
    return "\n".join(lines) + "\n"


def render_junit(result: CheckResult) -> bytes:
    """The JUnit XML document of ``result`` (UTF-8, with an XML declaration)."""
    failures = str(len(result.failed))
    tests = str(len(result.rows))
    root = ET.Element("testsuites", {"name": SUITE_NAME, "tests": tests, "failures": failures, "errors": "0",
                                     "time": "0"})  # fmt: skip
    suite = ET.SubElement(root, "testsuite", {"name": SUITE_NAME, "tests": tests, "failures": failures,
                                              "errors": "0", "skipped": "0", "time": "0"})  # fmt: skip
    for row in result.rows:
        case = ET.SubElement(suite, "testcase", {"classname": f"vakaudit.check.{row.group}", "name": row.metric,
                                                 "time": "0"})  # fmt: skip
        if not row.passed:
            message = f"{row.metric}: {row.change or 'changed'} beyond {row.bound}"
            if row.cause:
                message += f" ({row.cause})"
            failure = ET.SubElement(case, "failure", {"message": message, "type": "regression"})
            failure.text = _text(row)
        else:
            ET.SubElement(case, "system-out").text = _text(row)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


__all__ = ["SUITE_NAME", "render_junit"]
