"""Helpers of the scan tests: small homes built with the real ledger writer (no fsync), snapshots."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

from vakaudit.ledger import SessionLog

HEADER = {
    "session_id": "s1",
    "created_at": "2026-09-20T10:11:12.3456Z",
    "cwd": "/tmp/proj",
    "contract": {
        "app_version": "3.5.1",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "route_ladder": [],
        "route_objective": "",
        "route_annotations": [],
        "system_prompt": "You are Vak.",
        "permission_mode": "workspace-write",
        "capabilities": [],
        "prompt_layers": [],
    },
}


def fixed_clock():
    counter = itertools.count()
    return lambda: 1_790_000_000_000_000_000 + next(counter) * 1_000_000


def write_turns(log: SessionLog, turns: int, *, start: int = 0, binding_bytes: int = 2000) -> None:
    """Append ``turns`` ordinary turns: binding, directive, assistant tool call, tool result, answer."""
    for n in range(start, start + turns):
        log.append(
            "turn_capabilities_bound",
            {
                "epoch": 1,
                "capability_ids": ["tool:bash"],
                "excluded_ids": [],
                "system_prompt": "S" * binding_bytes,
                "tool_schemas": [{"name": "bash", "input_schema": {"type": "object"}}],
            },
        )
        log.append_message({"role": "user", "content": [{"type": "text", "text": f"question {n}"}]})
        log.append_message(
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": f"c{n}", "name": "bash", "input": {}}],
            },
            {"model": "m1", "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 3}},
        )
        log.append_message(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"c{n}", "content": "ok é", "is_error": False}
                ],
            }
        )
        log.append_message(
            {"role": "assistant", "content": [{"type": "text", "text": f"answer {n}"}]},
            {"model": "m1", "stop_reason": "end_turn", "usage": {"input_tokens": 20, "output_tokens": 5}},
        )


def make_ledger(path: Path, turns: int, session_id: str = "s1") -> Path:
    header = dict(HEADER, session_id=session_id)
    log = SessionLog.create(path, header, clock=fixed_clock(), fsync=False)
    try:
        write_turns(log, turns)
    finally:
        log.close()
    return path


def build_small_home(tmp_path: Path) -> Path:
    """Two ledgers (one in a nested agent home), a cost log, an undeclared file."""
    home = tmp_path / "home"
    make_ledger(home / "agents/vak/sessions/2599eb06cf360587/s1.jsonl", 3, "s1")
    make_ledger(home / "agents/vak/agents/vak/sessions/2599eb06cf360587/s2.jsonl", 2, "s2")
    (home / "agents/vak/cost-log.jsonl").write_bytes(
        b'{"ts":"2026-08-24T09:15:03.002114Z","model":"m1","provider":"anthropic","input_tokens":5,'
        b'"output_tokens":2,"usd":0.01,"source":"estimated","session_id":"s1"}\n'
    )
    (home / "notes.txt").write_bytes(b"not a vak artifact\n")
    return home


def snapshot(root: Path) -> dict[str, tuple]:
    """Bytes and mtimes of every file, and mtimes of every directory, under ``root``."""
    out: dict[str, tuple] = {}
    for dirpath, _dirnames, filenames in os.walk(root):
        st = os.lstat(dirpath)
        out[os.path.relpath(dirpath, root) + "/"] = ("dir", st.st_mtime_ns, st.st_mode)
        for name in filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            data = (
                Path(p).read_bytes()
                if os.path.isfile(p) and not os.path.islink(p)
                else os.readlink(p)
                if os.path.islink(p)
                else b""
            )
            out[os.path.relpath(p, root)] = (data, st.st_mtime_ns, st.st_size, st.st_mode)
    return out


def lstat_total(root: Path) -> int:
    """Total lstat bytes of every non-directory entry (independent of vakaudit's walk)."""
    total = 0
    for dirpath, _dirnames, filenames in os.walk(root):
        for name in filenames:
            total += os.lstat(os.path.join(dirpath, name)).st_size
    return total
