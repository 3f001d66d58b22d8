"""Build the byte-exact broken sample homes (and their clean controls) under ``sample_homes/broken/``.

Each home is written through vakaudit's own :class:`~vakaudit.ledger.SessionLog` with a fixed clock
and fixed ids, then the one defect the home is about is applied to the bytes. ``tests/forensics``
checks that the committed bytes equal what this script produces and that ``vakaudit verify`` reports
exactly the findings each README names.

Layout: ``<name>/README.md`` (one line: what is wrong, which findings are expected) and
``<name>/home/`` (the vak home itself, so the README is not a file of the home).

Usage: ``python sample_homes/broken/make.py [--out DIR]`` (default: the directory of this script).
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
from collections.abc import Callable
from pathlib import Path

from vakaudit.ledger import SessionLog, workspace_key
from vakaudit.ledger.ids import uuid7_from

HERE = Path(__file__).resolve().parent
CWD = "/tmp/proj"
WSKEY = workspace_key(CWD)  # 2599eb06cf360587 (spec vector)
START_NS = 1_789_898_400 * 10**9  # 2026-09-20T10:00:00Z
STEP_NS = 1_250_000_000


class FixedClock:
    """Deterministic ledger clock: START + n * STEP, optionally stepping back once at ``back_at``."""

    def __init__(self, back_at: int | None = None) -> None:
        self.n = 0
        self.back_at = back_at

    def __call__(self) -> int:
        self.n += 1
        t = START_NS + self.n * STEP_NS
        if self.back_at is not None and self.n >= self.back_at:
            t -= 60 * 10**9  # the machine clock stepped back one minute
        return t


class FixedIds:
    """Deterministic UUIDv7-shaped ids derived from the home name and a counter."""

    def __init__(self, seed: str) -> None:
        self.seed = seed
        self.n = 0

    def __call__(self) -> str:
        self.n += 1
        rand = hashlib.sha256(f"{self.seed}:{self.n}".encode()).digest()[:10]
        return uuid7_from(START_NS // 10**6 + self.n * 1250, rand)


def header(session_id: str, app_version: str = "3.5.0") -> dict:
    return {
        "session_id": session_id,
        "created_at": "2026-09-20T10:00:00.250Z",
        "cwd": CWD,
        "contract": {
            "app_version": app_version,
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


def one_turn(log: SessionLog, tool_input: object | None = None) -> None:
    """A small realistic turn: directive, tool call, tool result, answer, receipt, activity."""
    log.append_message({"role": "user", "content": [{"type": "text", "text": "what is in notes.txt?"}]})
    log.append_message(
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "call_1",
                    "name": "read",
                    "input": tool_input if tool_input is not None else {"path": "notes.txt"},
                }
            ],
        },  # fmt: skip
        {
            "model": "claude-sonnet-4-5",
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 812, "output_tokens": 41},
        },
    )
    log.append_message(
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "call_1",
                    "content": "milk, eggs, café au lait",
                    "is_error": False,
                }
            ],
        }  # fmt: skip
    )
    log.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "A shopping list: milk, eggs and coffee."}],
        },
        {
            "model": "claude-sonnet-4-5",
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 880, "output_tokens": 12},
        },
    )
    log.append(
        "receipt",
        {
            "purpose": "execute",
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "winning_attempt": 0,
            "attempts": [
                {
                    "ordinal": 0,
                    "reason": "initial",
                    "domain": "unknown",
                    "settlement": "ok",
                    "latency_ms": 2140,
                    "usage": {"input_tokens": 880, "output_tokens": 12},
                }
            ],  # fmt: skip
            "prefix_digest": "",
        },
    )
    log.append_activity("diag-1", "diagnostic", "succeeded", "prefix-changed", turn=1,
                        data={"current": "b1", "previous": "a0"})  # fmt: skip


def ledger_path(home: Path, scope: str = "agents/vak", session_id: str = "s-sample") -> Path:
    base = home / scope if scope else home
    return base / "sessions" / WSKEY / f"{session_id}.jsonl"


def write_session(path: Path, seed: str, body: Callable[[SessionLog], None] | None = None,
                  clock: FixedClock | None = None) -> bytes:  # fmt: skip
    """Write one ledger with SessionLog (fixed clock and ids) and return its bytes."""
    log = SessionLog.create(
        path, header(path.stem), clock=clock or FixedClock(), new_id=FixedIds(seed), fsync=False
    )
    try:
        (body or one_turn)(log)
    finally:
        log.close()
    return path.read_bytes()


def rechain(lines: list[bytes], start: int) -> None:
    """Recompute ``prev_hash`` of ``lines[start:]`` from the (edited) lines before them, like a forger."""
    for i in range(max(start, 1), len(lines)):
        digest = hashlib.sha256(lines[i - 1]).hexdigest().encode()
        lines[i] = re.sub(rb'"prev_hash":"[0-9a-f]{64}"', b'"prev_hash":"' + digest + b'"', lines[i], count=1)


def split(data: bytes) -> list[bytes]:
    assert data.endswith(b"\n")
    return data[:-1].split(b"\n")


def join(lines: list[bytes]) -> bytes:
    return b"\n".join(lines) + b"\n"


# -- the homes --------------------------------------------------------------------------------------
# Each builder gets the home directory and returns the README line.


def h_clean(home: Path) -> str:
    write_session(ledger_path(home), "clean")
    return "Control: one clean session ledger, nothing wrong. Expected findings: none."


def h_torn_last_line(home: Path) -> str:
    p = ledger_path(home)
    data = write_session(p, "torn")
    lines = split(data)
    p.write_bytes(join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
    return ("The last line was cut in half by an interrupted write (no LF, not a complete entry). "
            "Expected findings: torn_last_line.")  # fmt: skip


def h_prev_hash_edited(home: Path) -> str:
    p = ledger_path(home)
    lines = split(write_session(p, "prevhash"))
    i = lines[3].index(b'"prev_hash":"') + len(b'"prev_hash":"') + 10
    lines[3] = lines[3][:i] + (b"0" if lines[3][i : i + 1] != b"0" else b"1") + lines[3][i + 1 :]
    p.write_bytes(join(lines))
    return ("One hex digit of the prev_hash on line 4 was changed. "
            "Expected findings: prev_hash_mismatch (line 4).")  # fmt: skip


def h_payload_byte_changed(home: Path) -> str:
    p = ledger_path(home)
    lines = split(write_session(p, "payload"))
    lines[1] = lines[1].replace(b"notes.txt", b"notes.tXt")
    p.write_bytes(join(lines))
    return ("One byte inside the payload of line 2 (the user's text) was changed. "
            "Expected findings: line_modified (line 2).")  # fmt: skip


def h_lines_swapped(home: Path) -> str:
    p = ledger_path(home)
    lines = split(write_session(p, "swap"))
    lines[3], lines[4] = lines[4], lines[3]
    p.write_bytes(join(lines))
    return "Lines 4 and 5 were swapped. Expected findings: lines_reordered (line 4)."


def h_duplicate_id(home: Path) -> str:
    def body(log: SessionLog) -> None:
        log.append_message({"role": "user", "content": [{"type": "text", "text": "hello"}]})
        tail = log.tail_id
        # an id collision (vak 3.4.9 changelog: clock-derived ids collided): the new entry gets the tail's id
        log.append_message({"role": "assistant", "content": [{"type": "text", "text": "hi"}]}, entry_id=tail)
        log.append_message({"role": "user", "content": [{"type": "text", "text": "thanks"}]})

    write_session(ledger_path(home), "dupid", body)
    return ("Line 3 reuses the id of line 2 (an id collision) and, as its parent is the tail, points at "
            "itself. Expected findings: duplicate_id (line 3), parent_cycle.")  # fmt: skip


def h_orphan_parent(home: Path) -> str:
    p = ledger_path(home)
    lines = split(write_session(p, "orphan"))
    ghost = FixedIds("ghost")()
    lines[4] = re.sub(rb'"parent_id":"[^"]*"', b'"parent_id":"' + ghost.encode() + b'"', lines[4], count=1)
    rechain(lines, 5)
    p.write_bytes(join(lines))
    return ("Line 5 names a parent_id that is in no line of the file; the hash chain was recomputed, so "
            "only the tree is wrong. Expected findings: orphan_parent (line 5).")  # fmt: skip


def h_crlf(home: Path) -> str:
    p = ledger_path(home)
    data = write_session(p, "crlf")
    p.write_bytes(data.replace(b"\n", b"\r\n"))
    return "Every line ends in CR LF (converted by a Windows tool). Expected findings: crlf_line_end."


def h_bom(home: Path) -> str:
    p = ledger_path(home)
    data = write_session(p, "bom")
    p.write_bytes(b"\xef\xbb\xbf" + data)
    return "The file starts with a UTF-8 byte order mark (an editor saved it). Expected findings: bom."


def h_invalid_utf8(home: Path) -> str:
    p = ledger_path(home)
    lines = split(write_session(p, "utf8"))
    lines[1] = lines[1].replace(b"notes.txt", b"notes\xff.txt")
    p.write_bytes(join(lines))
    return "Line 2 contains the byte FF, which is not valid UTF-8. Expected findings: invalid_utf8 (line 2)."


def h_empty_ledger(home: Path) -> str:
    p = ledger_path(home)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(b"")
    return "A zero-byte session ledger (created, never written). Expected findings: empty_ledger."


def h_deep_json(home: Path) -> str:
    p = ledger_path(home)
    lines = split(write_session(p, "deep", lambda log: one_turn(log, {"path": "DEEP"})))
    lines[2] = lines[2].replace(b'"DEEP"', b"[" * 10_000 + b"]" * 10_000)
    rechain(lines, 3)
    p.write_bytes(join(lines))
    return ("Line 3 holds a tool input nested 10,000 levels deep (serde_json stops at 128). "
            "Expected findings: nesting_too_deep (line 3).")  # fmt: skip


def h_unchained(home: Path) -> str:
    p = ledger_path(home)
    data = write_session(p, "legacy")
    p.write_bytes(re.sub(rb',"prev_hash":"[0-9a-f]{64}"', b"", data))
    return ("A legacy ledger written before hash chaining: no line carries prev_hash. "
            "Expected findings: unchained_line.")  # fmt: skip


def h_unknown_kind(home: Path) -> str:
    def body(log: SessionLog) -> None:
        one_turn(log)
        log.append("telemetry", {"cpu_percent": 12.5})

    write_session(ledger_path(home), "unknown", body)
    return "The last entry has kind 'telemetry', which vak never writes. Expected findings: unknown_kind."


def h_timestamp_backwards(home: Path) -> str:
    write_session(ledger_path(home), "clockback", clock=FixedClock(back_at=5))
    return ("The machine clock stepped back one minute before line 5 was written. "
            "Expected findings: timestamp_backwards (line 5).")  # fmt: skip


def h_header_missing(home: Path) -> str:
    p = ledger_path(home)
    lines = split(write_session(p, "noheader"))[1:]
    lines[0] = re.sub(rb'"parent_id":"[^"]*"', b'"parent_id":null', lines[0], count=1)
    lines[0] = re.sub(rb',"prev_hash":"[0-9a-f]{64}"', b"", lines[0], count=1)
    rechain(lines, 1)
    p.write_bytes(join(lines))
    return "The header line is gone (the rest was re-chained). Expected findings: header_missing."


def h_branched(home: Path) -> str:
    def body(log: SessionLog) -> None:
        one_turn(log)
        log.branch_at(log.entries[1].id)
        log.append_message({"role": "user", "content": [{"type": "text", "text": "what is in todo.txt?"}]})

    write_session(ledger_path(home), "branch", body)
    return ("Clean: after branch_at, the first turn's tail is an abandoned branch (a vak feature). "
            "Expected findings: abandoned_branch (info).")  # fmt: skip


def h_work_lines(home: Path) -> str:
    def body(log: SessionLog) -> None:
        one_turn(log)
        contract = {"contract_id": "work-1", "revision": 0, "source_entry_id": log.entries[1].id,
                    "objective": "summarise notes.txt", "constraints": [], "assumptions": [], "criteria": [],
                    "items": [{"item_id": "one", "title": "read", "instructions": "read notes.txt",
                               "dependencies": [], "owner": "parent_agent", "required": True, "readonly": True,
                               "path_claims": [], "criterion_ids": []}]}  # fmt: skip
        log.append("work", {"contract_id": "work-1", "revision": 0,
                            "kind": {"kind": "contract_created", "contract": contract}})  # fmt: skip
        log.append("work", {"contract_id": "work-1", "revision": 0,
                            "kind": {"kind": "item_status_changed", "item_id": "one", "from": "proposed",
                                     "to": "ready", "attempt": 0, "reason": "dependencies satisfied"}})  # fmt: skip

    write_session(ledger_path(home), "work", body)
    return ("Clean: two work lines carry vak's duplicate 'kind' key (spec §2.4). "
            "Expected findings: work_duplicate_kind (info).")  # fmt: skip


def h_compaction_shapes(home: Path) -> str:
    def body(log: SessionLog) -> None:
        one_turn(log)
        first = log.entries[1].id
        log.append("compaction", {"summary": "User asked about notes.txt.", "first_kept_entry_id": first,
                                  "tokens_before": 1692, "reset_all": False})  # fmt: skip
        log.append("compaction", {"summary": "Turn 1: notes.txt.", "first_turn_id": first, "last_turn_id": first,
                                  "model": "claude-sonnet-4-5", "tokens_before": 1700, "reset_all": False})  # fmt: skip

    write_session(ledger_path(home), "compaction", body)
    return "Clean: one ledger holds both compaction shapes (A: first_kept_entry_id, B: turn range). Expected findings: none."


def h_undeclared_file(home: Path) -> str:
    write_session(ledger_path(home), "undeclared")
    (home / "agents" / "vak" / "notes-from-someone.txt").write_bytes(b"a file vak does not write\n")
    return "agents/vak/notes-from-someone.txt is a file no artifact kind declares. Expected findings: undeclared_file."


def h_symlink_outside_home(home: Path) -> str:
    p = ledger_path(home)
    write_session(p, "symlink")
    (p.parent / "leak.jsonl").symlink_to("../../../../../../../../../../../etc/hostname")
    return ("A relative symlink in the sessions directory points outside the home (../…/etc/hostname); it "
            "must not be followed. Expected findings: symlink_outside_home.")  # fmt: skip


def h_nested_home(home: Path) -> str:
    write_session(ledger_path(home, "agents/vak/agents/vak"), "nested")
    return ("The ledger lives in agents/vak/agents/vak/ (known vak defect D2). "
            "Expected findings: nested_home (info).")  # fmt: skip


def h_g1_layout(home: Path) -> str:
    write_session(ledger_path(home, ""), "g1", clock=None)
    return "Clean: a G1 layout home (sessions/ at the data root, no agents/). Expected findings: none."


HOMES: dict[str, Callable[[Path], str]] = {
    name[2:]: fn for name, fn in sorted(globals().items()) if name.startswith("h_") and callable(fn)
}


def build(out: Path) -> list[str]:
    """(Re)build every home under ``out``; returns the names."""
    for name, fn in HOMES.items():
        root = out / name
        if root.exists():
            shutil.rmtree(root)
        home = root / "home"
        home.mkdir(parents=True)
        line = fn(home)
        (root / "README.md").write_text(line + "\n", encoding="utf-8")
    return list(HOMES)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=HERE)
    args = ap.parse_args()
    build(args.out)


if __name__ == "__main__":
    main()
