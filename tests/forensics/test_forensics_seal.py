"""Seal / verify_since: growth passes; rewrite, truncation, replacement and deletion are named."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from vakaudit.forensics import seal_home, verify_since
from vakaudit.forensics.seal import seal_file, verify_file_since

LEDGER_REL = "agents/vak/sessions/2599eb06cf360587/s-sample.jsonl"


def _home(sample_homes: Path, tmp_path: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(sample_homes / "broken" / "clean" / "home", home)
    return home


def test_seal_record_fields(sample_homes: Path, tmp_path: Path) -> None:
    home = _home(sample_homes, tmp_path)
    seal = seal_home(home)
    assert seal["format"] == "vakaudit-seal/1"
    (rec,) = seal["files"]
    data = (home / LEDGER_REL).read_bytes()
    lines = data.split(b"\n")[:-1]
    assert rec["rel_path"] == LEDGER_REL and rec["kind"] == "session_ledger"
    assert rec["size_bytes"] == len(data) and rec["line_count"] == len(lines) == 7
    assert rec["running_digest"] == hashlib.sha256(data).hexdigest()
    assert rec["head_digest"] == hashlib.sha256(lines[-1]).hexdigest()
    assert "/" not in seal["sealed_at"] and not any(f["rel_path"].startswith("/") for f in seal["files"])


def test_growth_is_fine_and_changes_are_named(sample_homes: Path, tmp_path: Path) -> None:
    home = _home(sample_homes, tmp_path)
    path = home / LEDGER_REL
    data = path.read_bytes()
    seal = seal_home(home)
    with open(path, "ab") as f:
        f.write(b'{"appended":true}\n')
    assert verify_since(home, seal) == []
    offsets = [0]
    for line in data.split(b"\n")[:-1]:
        offsets.append(offsets[-1] + len(line) + 1)
    # rewritten in line 3
    path.write_bytes(data[: offsets[2] + 5] + b"X" + data[offsets[2] + 6 :])
    (f,) = verify_since(home, seal)
    assert (f.code.value, f.line_no, f.offset_bytes) == ("append_only_violation", 3, offsets[2])
    assert "rewritten" in f.message
    # truncated inside line 6
    path.write_bytes(data[: offsets[5] + 10])
    (f,) = verify_since(home, seal)
    assert (f.line_no, f.offset_bytes) == (6, offsets[5]) and "truncated" in f.message
    # truncated exactly at a line end: the first missing line is named
    path.write_bytes(data[: offsets[4]])
    (f,) = verify_since(home, seal)
    assert f.line_no == 5 and f.offset_bytes == offsets[4]
    # replaced by a symlink, then deleted
    path.unlink()
    path.symlink_to("/etc/hostname")
    (f,) = verify_since(home, seal)
    assert "not a regular file" in f.message
    path.unlink()
    (f,) = verify_since(home, seal)
    assert "deleted" in f.message and f.actual == "missing"


def test_a_sealed_fragment_completed_later_is_growth(tmp_path: Path) -> None:
    p = tmp_path / "x.jsonl"
    p.write_bytes(b'{"a":1}\n{"b":')
    rec = seal_file(p, "x.jsonl")
    assert rec["line_count"] == 2 and rec["head_digest"] == hashlib.sha256(b'{"a":1}').hexdigest()
    p.write_bytes(b'{"a":1}\n{"b":2}\n')
    assert verify_file_since(p, rec) is None
    p.write_bytes(b'{"a":1}\n{"c":2}\n')
    f = verify_file_since(p, rec)
    assert f is not None and f.line_no == 2


def test_a_seal_naming_paths_outside_a_home_is_refused(tmp_path: Path) -> None:
    import orjson
    import pytest

    from vakaudit.errors import UsageError
    from vakaudit.forensics import read_seal

    rec = {
        "rel_path": "../../etc/passwd",
        "size_bytes": 1,
        "line_count": 1,
        "running_digest": "x",
        "line_crc32": "",
    }
    bad = tmp_path / "seal.json"
    bad.write_bytes(orjson.dumps({"format": "vakaudit-seal/1", "files": [rec]}))
    with pytest.raises(UsageError, match="not a path inside a home"):
        read_seal(bad)
    bad.write_bytes(b"{}")
    with pytest.raises(UsageError, match="is not a vakaudit-seal/1 seal"):
        read_seal(bad)
