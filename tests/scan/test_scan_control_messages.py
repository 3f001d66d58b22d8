"""A control message is one whose ``meta.control`` is present and not null, whatever its JSON type:
the scan (compiled and reference paths), the turn numbering of ``vakaudit.ledger`` and the 7.0
commit rule agree. Expectations are written by hand from the entries below."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from vakaudit.ledger import SessionLog
from vakaudit.storage.commit import is_commit_point

SESSION = "agents/vak/sessions/2599eb06cf360587/s-ctl.jsonl"
TEXT = [{"type": "text", "text": "go"}]
# (meta, control column, is a directive)
USER = [
    (None, None, True),
    ({"control": "steer"}, "steer", False),
    ({"control": {"kind": "steer"}}, '{"kind":"steer"}', False),
    ({"control": ""}, "", False),
    ({"control": False}, "false", False),
    ({"control": None}, None, True),
]


def _home(root: Path) -> Path:
    home = root / "home"
    header = {"session_id": "s-ctl", "created_at": "2026-01-01T00:00:00Z", "cwd": "/w", "app_version": "3.5.1"}
    log = SessionLog.create(home / SESSION, header, fsync=False)
    try:
        for meta, _col, _d in USER:
            log.append_message({"role": "user", "content": TEXT}, meta)
            log.append_message({"role": "assistant", "content": TEXT})
    finally:
        log.close()
    return home


def _rows(home: Path, out: Path, *, native: bool) -> list[dict]:
    env = {k: v for k, v in os.environ.items() if k != "VAKAUDIT_NO_NATIVE"}
    if not native:
        env["VAKAUDIT_NO_NATIVE"] = "1"
    code = (
        "import json, sys; from vakaudit import _native; from vakaudit.scan import scan_home; "
        "assert _native.AVAILABLE is (sys.argv[3] == '1'); r = scan_home(sys.argv[1], out=sys.argv[2], jobs=1); "
        "print(json.dumps([{k: e[k] for k in ('role', 'control', 'is_directive', 'turn_no')} "
        "for e in r.table('entries').to_pylist() if e['kind'] == 'message']))"
    )
    done = subprocess.run([sys.executable, "-c", code, str(home), str(out), "1" if native else "0"], env=env, check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout)


def test_scan_paths_agree_on_control_messages(tmp_path: Path) -> None:
    home = _home(tmp_path)
    for native in (True, False):
        users = [r for r in _rows(home, tmp_path / f"scan{native}", native=native) if r["role"] == "user"]
        assert [(r["control"], r["is_directive"]) for r in users] == [(c, d) for _m, c, d in USER], native
        # two directives open two turns: the first user message and the one whose control is null
        assert [r["turn_no"] for r in users] == [1, 1, 1, 1, 1, 2], native


def test_the_ledger_and_the_commit_rule_agree(tmp_path: Path) -> None:
    from vakaudit.ledger.vocab import is_directive

    home = _home(tmp_path)
    log = SessionLog.open(home / SESSION)
    try:
        users = [e for e in log.entries if e.kind == "message" and e.payload["message"]["role"] == "user"]
        assert [is_directive(e) for e in users] == [d for _m, _c, d in USER]
        # 7.0: a user message syncs only when it is not a control message
        assert [is_commit_point({"kind": "message", **e.payload}) for e in users] == [d for _m, _c, d in USER]
    finally:
        log.close()
