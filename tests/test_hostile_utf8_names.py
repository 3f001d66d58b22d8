"""Hostile input: file names that are not UTF-8 never crash a command, and their bytes are kept.

A POSIX file name is bytes. The home below holds a session ledger named ``\\xff\\xfe-session.jsonl``,
a whole agent home under ``agents/\\xffbot/`` with a ledger named ``\\xc3(.jsonl`` (a truncated
two-byte sequence), a skill folder ``r\\xe9lease/`` (Latin-1 é), an undeclared ``bad\\xe9name.txt``
at the root and a symlink ``link-\\xfe`` to a target that is not UTF-8 either. Every command runs
as its own process with a strict UTF-8 standard output; the expected escaped forms are spelled out
by hand (docs/tables.md: each undecodable byte as ``\\xNN``).
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from vakaudit.names import raw_bytes, shown

REPO = Path(__file__).resolve().parent.parent
TINY = REPO / "sample_homes" / "tiny"
LEDGER = b"agents/vak/sessions/11ad27fbabb05e63/019fcbda-c29b-7346-892a-441bec90ec8b.jsonl"

#: the hostile names, as bytes, and how every output shows them
HOSTILE = {
    b"agents/vak/sessions/11ad27fbabb05e63/\xff\xfe-session.jsonl":
        "agents/vak/sessions/11ad27fbabb05e63/\\xff\\xfe-session.jsonl",
    b"agents/\xffbot/sessions/abc/\xc3(.jsonl": "agents/\\xffbot/sessions/abc/\\xc3(.jsonl",
    b"agents/vak/skills/r\xe9lease/SKILL.md": "agents/vak/skills/r\\xe9lease/SKILL.md",
    b"bad\xe9name.txt": "bad\\xe9name.txt",
    b"link-\xfe": "link-\\xfe",
}  # fmt: skip


def test_shown_and_raw_bytes_against_hand_written_forms() -> None:
    assert shown(os.fsdecode(b"bad\xe9name.txt")) == "bad\\xe9name.txt"
    assert shown(os.fsdecode(b"\xff\xfe-s.jsonl")) == "\\xff\\xfe-s.jsonl"
    assert shown(os.fsdecode(b"caf\xc3\xa9-\xe9")) == "café-\\xe9"  # the valid sequence stays é
    assert shown("café") == "café" and shown("plain") == "plain"
    assert shown("a\ud800") == "a\\ud800"  # a surrogate no file name holds: escaped, never a crash
    assert raw_bytes(os.fsdecode(b"bad\xe9name.txt")) == b"bad\xe9name.txt"
    assert raw_bytes("café") is None and raw_bytes("plain") is None and raw_bytes(None) is None
    for name in HOSTILE:
        assert raw_bytes(os.fsdecode(name)) == name
        shown(os.fsdecode(name)).encode("utf-8")  # valid UTF-8


@pytest.fixture
def home(tmp_path: Path) -> Path:
    dst = tmp_path / "home"
    shutil.copytree(TINY, dst, symlinks=True, copy_function=shutil.copy2)
    root = os.fsencode(dst) + b"/"
    ledger = (TINY / os.fsdecode(LEDGER)).read_bytes()
    for name in HOSTILE:
        path = root + name
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if name.startswith(b"link-"):
            os.symlink(b"/nowhere/\xfe\xff", path)
        elif name.endswith(b".jsonl"):
            with open(path, "wb") as f:
                f.write(ledger)
        elif name.endswith(b"SKILL.md"):
            with open(path, "wb") as f:
                f.write((TINY / "agents/vak/skills/release-notes/SKILL.md").read_bytes())
        else:
            with open(path, "wb") as f:
                f.write(b"not vak's\n")
    for dirpath, _dirs, _files in os.walk(root, topdown=False):
        os.utime(dirpath, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    return dst


def _snapshot(home: Path) -> dict[bytes, tuple]:
    """(mtime, mode, bytes) of every entry under ``home``, by its raw name."""
    root = os.fsencode(home)
    snap: dict[bytes, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            data = None
            if os.path.isfile(path) and not os.path.islink(path):
                with open(path, "rb") as f:
                    data = f.read()
            snap[path] = (st.st_mtime_ns, st.st_mode, data)
    return snap


def _run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONIOENCODING": "utf-8:strict",
           "XDG_CACHE_HOME": str(cwd / "cache")}  # fmt: skip
    out = subprocess.run([sys.executable, "-m", "vakaudit", *map(str, args)], capture_output=True, cwd=cwd, env=env)
    assert out.returncode in (0, 1), (args, out.returncode, out.stderr.decode("utf-8", "replace")[-3000:])
    out.stdout.decode("utf-8")  # strict: raises on a raw byte of a name
    out.stderr.decode("utf-8")
    return out


@pytest.mark.slow
def test_every_command_survives_names_that_are_not_utf8(home: Path, tmp_path: Path) -> None:
    before = _snapshot(home)
    w = tmp_path / "work"
    w.mkdir()
    scan = w / "scan"
    names = set(HOSTILE.values())

    doc = json.loads(_run("scan", home, "--out", scan, "-j", "1", "--json", cwd=w).stdout)
    assert doc["tables"]["files"] > 0
    rescan = json.loads(_run("scan", home, "--out", scan, "-j", "1", "--json", cwd=w).stdout)
    assert rescan["files"]["full"] == 0 and rescan["bytes_read"] == 0  # the manifest found every name again

    files = pq.read_table(scan / "files").to_pylist()
    raw_of = {r["rel_path"]: r["rel_path_raw"] for r in files}
    assert {v: raw_of.get(v) for v in names} == {v: k for k, v in HOSTILE.items()}
    assert all(raw is None for rel, raw in raw_of.items() if rel not in names)
    by_path = {r["rel_path"]: r for r in files}
    ledger = "agents/vak/sessions/11ad27fbabb05e63/\\xff\\xfe-session.jsonl"
    assert by_path[ledger]["session_id"] == "\\xff\\xfe-session"
    assert by_path["agents/\\xffbot/sessions/abc/\\xc3(.jsonl"]["home_scope"] == "agents/\\xffbot"
    findings = pq.read_table(scan / "findings").to_pylist()
    undeclared = {f["rel_path"]: f["rel_path_raw"] for f in findings if f["code"] == "undeclared_file"}
    assert undeclared["bad\\xe9name.txt"] == b"bad\xe9name.txt"
    link = next(f for f in findings if f["code"] == "symlink_outside_home")
    assert (link["rel_path"], link["rel_path_raw"], link["actual"]) == ("link-\\xfe", b"link-\xfe", "/nowhere/\\xfe\\xff")
    # the ledger under the hostile name is read like its original: same entries
    entries = pq.read_table(scan / "entries", columns=["rel_path"]).column("rel_path").to_pylist()
    original = LEDGER.decode()
    assert entries.count(ledger) == entries.count(original) > 0
    assert entries.count("agents/\\xffbot/sessions/abc/\\xc3(.jsonl") == entries.count(original)

    sql = _run("sql", scan, "select count(*) AS n from files where rel_path_raw is not null", cwd=w).stdout
    assert sql.decode().split() == ["n", str(len(HOSTILE))]
    assert json.loads(_run("analyze", scan, "--json", cwd=w).stdout)
    for fmt, name in (("html", "r.html"), ("md", "r.md"), ("json", "r.json")):
        _run("report", home, "--format", fmt, "-o", w / name, "-q", cwd=w)
        text = (w / name).read_bytes().decode("utf-8")
        assert "bad\\xe9name.txt" in text or fmt == "json" or "bad\\\\xe9name.txt" in text
    json.loads((w / "r.json").read_bytes())

    _run("timeline", home, "-o", w / "t.jsonl", cwd=w)
    rows = [json.loads(line) for line in (w / "t.jsonl").read_bytes().decode("utf-8").splitlines()]
    assert names - {"link-\\xfe"} <= {r["rel_path"] for r in rows}
    _run("timeline", home, "--format", "csv", "-o", w / "t.csv", cwd=w)
    cells = {r["rel_path"] for r in csv.DictReader(io.StringIO((w / "t.csv").read_bytes().decode("utf-8")))}
    assert ledger in cells
    assert _run("timeline", home, "-o", "-", cwd=w).stdout.count(b"\\\\xff\\\\xfe-session") > 0

    _run("seal", home, "-o", w / "seal.json", "--json", cwd=w)
    sealed = {r["rel_path"]: r.get("rel_path_raw") for r in json.loads((w / "seal.json").read_bytes())["files"]}
    assert sealed[ledger] == HOSTILE_RAW_HEX(ledger)
    since = json.loads(_run("verify", home, "--since", w / "seal.json", "--json", cwd=w).stdout)
    assert not [f for f in since["findings"] if f["code"] == "append_only_violation"]  # found again, unchanged

    verify = json.loads(_run("verify", home, "--json", cwd=w).stdout)
    assert ledger in {r["rel_path"] for r in verify["ledgers"]}
    assert "bad\\xe9name.txt" in {f["rel_path"] for f in verify["findings"]}
    assert b"\\xff\\xfe-session" in _run("verify", home, cwd=w).stdout

    replay = json.loads(_run("replay", home, "--json", cwd=w).stdout)
    assert any(s["ledger"].endswith("\\xff\\xfe-session.jsonl") for s in replay["steps"])
    assert {s["session_id"] for s in replay["steps"]} >= {"019fcbda-c29b-7346-892a-441bec90ec8b"}
    _run("replay", home, cwd=w)
    _run("replay", home, "--export", w / "x.jsonl", cwd=w)
    for line in (w / "x.jsonl").read_bytes().decode("utf-8").splitlines():
        json.loads(line)

    _run("baseline", home, "-o", w / "b.json", "--scan-out", scan, cwd=w)
    assert "bad\\xe9name.txt" in json.loads((w / "b.json").read_bytes())["undeclared_files"]
    json.loads(_run("check", home, "--baseline", w / "b.json", "--scan-out", scan, "--json", cwd=w).stdout)
    json.loads(_run("kinds", "--json", cwd=w).stdout)
    json.loads(_run("fleet", "scan", home, "--lake", w / "lake", "--json", cwd=w).stdout)

    assert _snapshot(home) == before, "a command changed the home"


def HOSTILE_RAW_HEX(shown_name: str) -> str:  # noqa: N802 - reads as a constant lookup
    return next(k for k, v in HOSTILE.items() if v == shown_name).hex()
