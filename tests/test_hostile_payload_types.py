"""A field of the wrong JSON type is a finding, never a crash, in scan, analyze, report and timeline.

The replay/verify property (tests/replay/test_replay_payload_types.py) edits one payload value of a
ledger line; this one edits any value of a line, envelope included (``ts`` a number, ``id`` a
number, ``parent_id`` an object, ``kind`` a list...), of a session ledger or a side ledger (the cost
log, the activity log), into a small home, and runs the scan, the analysis, the JSON report and the
timeline on it. A ledger line edited anywhere breaks the hash chain its successor carries, so the
scan must name the edited line or the next one; a side-ledger row must at least not stop the
commands. Few examples: each one scans and reports a home.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.hostile_homes import LEDGER, TINY

OTHERS = [0, 2.5, "s", "", None, [], [1, "x"], {}, {"a": 1}, True, -1, "2026-13-45T99:00:00Z"]
SIDES = [Path("cost-log.jsonl"), Path("agents/vak/activity-log.jsonl")]


def _leaves(obj, path=()):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _leaves(v, (*path, i))
    if path:
        yield path


def _set(obj, path, value) -> None:
    for p in path[:-1]:
        obj = obj[p]
    obj[path[-1]] = value


def _small_home(dst: Path) -> Path:
    for rel in (LEDGER, *SIDES):
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(TINY / rel, dst / rel)
    return dst


@pytest.mark.slow
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_any_value_of_another_type_never_crashes_scan_analyze_report_or_timeline(tmp_path_factory, data) -> None:
    from vakaudit.analyze import analyze
    from vakaudit.forensics import build_timeline
    from vakaudit.report import build_report
    from vakaudit.scan import open_scan, scan_home

    rel = data.draw(st.sampled_from([LEDGER, *SIDES]))
    lines = (TINY / rel).read_bytes().split(b"\n")
    n = data.draw(st.integers(0, len(lines) - 3))  # not the last line: its successor proves the edit
    d = json.loads(lines[n])
    field = data.draw(st.sampled_from(list(_leaves(d))))
    _set(d, field, data.draw(st.sampled_from(OTHERS)))
    edited = json.dumps(d, separators=(",", ":")).encode()
    if edited == lines[n]:
        return  # the drawn value is the one already there: nothing was edited
    lines[n] = edited
    work = Path(tmp_path_factory.mktemp("p"))
    home = _small_home(work / "home")
    (home / rel).write_bytes(b"\n".join(lines))

    scan_home(home, work / "scan", jobs=1)
    findings = open_scan(work / "scan").table("findings").to_pylist()
    if rel == LEDGER:
        at = {f["line_no"] for f in findings if f["rel_path"] == str(LEDGER)}
        assert at & {n + 1, n + 2}, (field, findings)
    analyze(work / "scan")
    doc = json.loads(build_report(work / "scan", format="json"))
    assert doc
    timeline = build_timeline(home)
    assert timeline.num_rows > 0


@pytest.mark.parametrize("content", [2.5, 7, True, {"type": "text", "text": "x"}, "plain"])
def test_a_message_content_of_another_type_is_shown_without_its_blocks_on_the_timeline(
    tmp_path: Path, content: object
) -> None:
    """A case the property above found: a message entry whose ``content`` is not a list (vak writes a
    list of blocks) still gives its timeline row, with no block text."""
    from vakaudit.forensics import build_timeline

    lines = (TINY / LEDGER).read_bytes().split(b"\n")
    n = next(i for i, line in enumerate(lines) if b'"kind":"message"' in line)
    d = json.loads(lines[n])
    d["message"]["content"] = content
    lines[n] = json.dumps(d, separators=(",", ":")).encode()
    home = _small_home(tmp_path / "home")
    (home / LEDGER).write_bytes(b"\n".join(lines))
    rows = build_timeline(home).to_pylist()
    row = next(r for r in rows if r.get("entry_id") == d["id"])
    role = d["message"]["role"]
    assert row["message"] == f"{role}:"  # the role, then no block (the row's text is whitespace-trimmed)
