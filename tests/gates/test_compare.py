"""compare() and the budget on hand-written baseline documents: every expected verdict is worked out
here from the numbers in the test."""

from __future__ import annotations

import json

import pytest

from vakaudit.errors import UsageError
from vakaudit.gates import compare, parse_budget, read_baseline


def doc(metrics: dict, **extra) -> dict:
    base = {"schema_version": "1.0", "format": "vakaudit-baseline", "metrics": metrics, "findings": {},
            "undeclared_files": [], "replay": {}, "readscale": None, "scorecard": None}  # fmt: skip
    base.update(extra)
    return base


def rows(result) -> dict:
    return {r.metric: r for r in result.rows}


def test_growth_is_gated_relative_and_a_decrease_never_fails() -> None:
    budget = parse_budget("")
    then = doc({"bytes_per_turn": 1000.0, "entries_per_turn": 10.0})
    r = rows(compare(then, doc({"bytes_per_turn": 1050.0, "entries_per_turn": 5.0}), budget))
    assert r["bytes_per_turn"].passed and r["bytes_per_turn"].change == "+5.0%"  # exactly at 5%: allowed
    assert r["entries_per_turn"].passed and r["entries_per_turn"].change == "-50.0%"
    r = rows(compare(then, doc({"bytes_per_turn": 1050.1, "entries_per_turn": 10.0}), budget))
    assert not r["bytes_per_turn"].passed


def test_patterns_gate_breakdowns_and_an_exact_name_wins() -> None:
    budget = parse_budget('[tolerance]\n"bytes_per_turn.kind.*" = 0.10\n"bytes_per_turn.kind.message" = 0.50\n')
    then = doc({"bytes_per_turn.kind.message": 100.0, "bytes_per_turn.kind.activity": 100.0})
    now = doc({"bytes_per_turn.kind.message": 140.0, "bytes_per_turn.kind.activity": 111.0})
    r = rows(compare(then, now, budget))
    assert r["bytes_per_turn.kind.message"].passed  # +40% <= 50%
    assert not r["bytes_per_turn.kind.activity"].passed  # +11% > 10%
    assert r["bytes_per_turn.kind.activity"].bound == "growth <= 10%"
    # ungated breakdowns produce no row, but name the cause of a headline move
    r = rows(compare(doc({"bytes_per_turn": 200.0, "bytes_per_turn.kind.message": 100.0,
                          "bytes_per_turn.kind.activity": 100.0}),
                     doc({"bytes_per_turn": 230.0, "bytes_per_turn.kind.message": 100.0,
                          "bytes_per_turn.kind.activity": 130.0}), parse_budget("")))  # fmt: skip
    assert "bytes_per_turn.kind.activity" not in r
    assert r["bytes_per_turn"].cause == "kind activity +30.0%"


def test_absolute_ceiling_applies_whatever_the_baseline() -> None:
    budget = parse_budget("[max]\nbarriers_per_turn = 14\n")
    r = rows(compare(doc({"barriers_per_turn": 15.0}), doc({"barriers_per_turn": 15.0}), budget))
    assert not r["barriers_per_turn"].passed and r["barriers_per_turn"].bound == "growth <= 5%, <= 14"


def test_a_read_becoming_home_class_fails_and_one_that_was_already_home_does_not() -> None:
    budget = parse_budget("")
    then = doc({}, readscale={"a": "flat", "b": "home", "c": "session"})
    now = doc({}, readscale={"a": "home", "b": "home", "c": "flat"})
    r = rows(compare(then, now, budget))
    assert not r["readscale.a"].passed and r["readscale.a"].change == "flat -> home"
    assert r["readscale.b"].passed and r["readscale.c"].passed
    off = parse_budget("[rules]\nno_home_class_reads = false\n")
    assert rows(compare(then, now, off))["readscale.a"].passed


def test_new_findings_by_severity_and_chain_findings() -> None:
    then = doc({}, findings={"undeclared_file": 1})
    now = doc({}, findings={"undeclared_file": 3, "timestamp_backwards": 1, "line_modified": 1})
    r = rows(compare(then, now, parse_budget("")))
    assert r["findings.undeclared_file"].passed  # info: below the default "warning"
    assert not r["findings.timestamp_backwards"].passed  # a warning that is new
    assert not r["chain_findings"].passed and r["chain_findings"].cause == "line_modified 1"
    r = rows(compare(then, now, parse_budget('[rules]\nnew_findings = "info"\n')))
    assert not r["findings.undeclared_file"].passed


@pytest.mark.parametrize(
    "text, message",
    [
        ("[tolerance]\nbytes_per_turn = -1\n", "non-negative"),
        ("[rules]\nnew_findings = \"often\"\n", "new_findings must be one of"),
        ("[rules]\nno_such_rule = true\n", "unknown rule"),
        ("[max\n", "not valid TOML"),
    ],
)
def test_bad_budget_is_a_usage_error(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_budget(text)


def test_baseline_of_another_major_version_is_refused(tmp_path) -> None:
    p = tmp_path / "b.json"
    p.write_text(json.dumps(doc({}, schema_version="2.0")), encoding="utf-8")
    with pytest.raises(UsageError, match="schema_version"):
        read_baseline(p)
    p.write_text("{}", encoding="utf-8")
    with pytest.raises(UsageError, match="not a vakaudit-baseline"):
        read_baseline(p)
