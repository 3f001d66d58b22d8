"""docs/ci-gates.md says what the code does: the error codes that fail `verify` by default, and the
exit codes of examples/ci-gate.sh."""

from __future__ import annotations

import re
from pathlib import Path

from vakaudit import FindingCode, Severity
from vakaudit.forensics import severity_of

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "ci-gates.md").read_text(encoding="utf-8")
SCRIPT = (REPO / "examples" / "ci-gate.sh").read_text(encoding="utf-8")


def test_listed_error_codes_are_the_default_policy_errors() -> None:
    block = DOC.split("<!-- error-codes -->", 1)[1].split("<!-- /error-codes -->", 1)[0]
    listed = set(re.findall(r"`([a-z0-9_]+)`", block))
    errors = {c.value for c in FindingCode if severity_of(c) == Severity.ERROR}
    assert listed == errors


def test_script_exit_codes_are_documented_in_both_places() -> None:
    header = "\n".join(line for line in SCRIPT.splitlines() if line.startswith("#"))
    in_script = {int(n) for n in re.findall(r"^#\s+(\d)\s{2,}\S", header, re.M)}
    section = DOC.split("## 5. `examples/ci-gate.sh`", 1)[1].split("## 6.", 1)[0]
    in_doc = {int(n) for n in re.findall(r"^\| (\d) \|", section, re.M)}
    assert in_script == in_doc == {0, 1, 2, 3, 4}
    # and every `exit N` the script can take is one of them
    assert {int(n) for n in re.findall(r"\bexit (\d+)", SCRIPT)} <= in_script


def test_documented_default_budget_is_the_code_default() -> None:
    from vakaudit.gates import DEFAULT_BUDGET_TOML

    block = DOC.split("<!-- default-budget -->", 1)[1].split("<!-- /default-budget -->", 1)[0]
    assert block.strip() == f"```toml\n{DEFAULT_BUDGET_TOML}```"
