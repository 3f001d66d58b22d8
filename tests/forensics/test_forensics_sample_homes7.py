"""The committed 7.0 sample homes: bytes as ``make_v7.py`` writes them, and what ``verify`` says.

Each ``sample_homes/broken7/<name>/README.md`` is one line ending ``-> `code`, …`` (or ``-> none``):
the findings ``vakaudit verify`` must report on ``<name>/home`` (besides the ``tenant_store_home``
note every 7.0 home gets), no more and no fewer; a README that mentions ``--keys`` is verified
with ``sample_homes/v7-keys.json``. The frame-level defects are located independently: the frame
offsets of the open segment are walked here with nothing but the frame layout (4-byte LE length,
flags and payload, 32-byte hash), on the control home.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import sqlite3
import struct
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vakaudit.cli import app
from vakaudit.findings import Severity
from vakaudit.forensics import verify_home
from vakaudit.storage import KeyRing

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_homes"
BROKEN = SAMPLES / "broken7"
KEYS = SAMPLES / "v7-keys.json"
NAMES = sorted(p.name for p in BROKEN.iterdir() if p.is_dir())
LEDGER1 = "agents/vak/sessions/spc_0199c3a0-7a00-7000-8000-00000000a001/0199c3a0-7b00-7000-8000-0000000000aa"
NOTE = "tenant_store_home"


def _readme(name: str) -> tuple[set[str], bool]:
    line = (BROKEN / name / "README.md").read_text(encoding="utf-8").strip()
    assert "\n" not in line, "one line per home"
    tail = line.rsplit("->", 1)[1]
    return set(re.findall(r"`([a-z_]+)`", tail)), "--keys" in line


def _codes(findings: list) -> set[str]:
    return {f.code.value for f in findings if f.code.value != NOTE}


def _frame_offsets(data: bytes) -> list[int]:
    offsets, off = [], 0
    while off + 4 <= len(data):
        (length,) = struct.unpack_from("<I", data, off)
        offsets.append(off)
        off += 4 + length + 32
    return offsets


def _make_module():
    spec = importlib.util.spec_from_file_location("make_v7", SAMPLES / "make_v7.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["make_v7"] = mod  # its dataclasses look their module up
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.modules.pop("make_v7", None)
    return mod


def test_there_is_a_broken_home_per_code_the_script_declares() -> None:
    mod = _make_module()
    assert sorted(mod.BROKEN) == NAMES
    assert len(NAMES) >= 20


def _rows(db: Path, tmp: Path) -> list[tuple]:
    copy = tmp / f"{db.parent.parent.parent.name}-refs.db"
    shutil.copyfile(db, copy)  # never open the committed file itself
    con = sqlite3.connect(copy)
    try:
        return con.execute("SELECT name, generation, epoch, target FROM refs ORDER BY name").fetchall()
    except sqlite3.DatabaseError:
        return [("not a database", copy.read_bytes())]
    finally:
        con.close()


def test_committed_bytes_are_what_make_v7_writes(tmp_path: Path) -> None:
    import subprocess

    subprocess.run([sys.executable, str(SAMPLES / "make_v7.py"), "--out", str(tmp_path)], check=True,
                   env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})  # fmt: skip
    for sub in ("v7", "broken7"):
        made = sorted(p.relative_to(tmp_path).as_posix() for p in (tmp_path / sub).rglob("*") if p.is_file())
        committed = sorted(p.relative_to(SAMPLES).as_posix() for p in (SAMPLES / sub).rglob("*") if p.is_file())
        assert made == committed
        for rel in made:
            if rel.endswith("refs.db"):  # SQLite pages follow the library: compare the rows
                assert _rows(tmp_path / rel, tmp_path) == _rows(SAMPLES / rel, tmp_path), rel
            else:
                assert (tmp_path / rel).read_bytes() == (SAMPLES / rel).read_bytes(), rel
    assert (tmp_path / "v7-keys.json").read_bytes() == KEYS.read_bytes()


def test_the_key_file_lives_beside_the_home_not_inside_it() -> None:
    assert KEYS.is_file()
    assert not any(p.name.endswith(".json") and "keks" in p.read_text(errors="replace")
                   for p in (SAMPLES / "v7").rglob("*.json"))  # fmt: skip


@pytest.mark.parametrize("keyed", [False, True], ids=["keyless", "keys"])
def test_the_sample_home_verifies_clean(keyed: bool) -> None:
    rep = verify_home(SAMPLES / "v7", keys=KeyRing.from_file(KEYS) if keyed else None)
    assert _codes(rep.findings) == set()
    assert rep.layout == "g3"
    assert rep.segment_dirs == 5  # two conversations, cost log, routing evidence, security events
    # 1 header + 4 per turn: conversation 1 has 3 turns, conversation 2 one; 3 + 3 + 1 chain rows
    assert rep.frames == (1 + 4 * 3) + (1 + 4) + 3 + 3 + 1


@pytest.mark.parametrize("name", NAMES)
def test_verify_reports_exactly_the_readme_findings(name: str) -> None:
    expected, keyed = _readme(name)
    rep = verify_home(BROKEN / name / "home", keys=KeyRing.from_file(KEYS) if keyed else None)
    assert _codes(rep.findings) == expected, [(f.code.value, f.rel_path, f.message) for f in rep.findings]


def test_keyless_verify_cannot_see_what_only_the_keys_show() -> None:
    for name in NAMES:
        expected, keyed = _readme(name)
        if keyed:
            assert _codes(verify_home(BROKEN / name / "home").findings) == set(), name


@pytest.mark.parametrize(
    ("name", "code", "frame"),
    [
        ("frame_bad_link", "frame_bad_link", 1),
        ("frame_bad_length", "frame_bad_length", 1),
        ("frame_length_past_end", "frame_bad_length", 1),
        ("frame_torn_tail", "frame_torn_tail", -1),
        ("frame_undecryptable", "frame_undecryptable", 1),
    ],
)
def test_frame_findings_name_the_segment_frame_and_byte_offset(name: str, code: str, frame: int) -> None:
    offsets = _frame_offsets((BROKEN / "clean/home" / LEDGER1 / "seg-00000002.log").read_bytes())
    index = frame if frame >= 0 else len(offsets) - 1
    keyed = _readme(name)[1]
    rep = verify_home(BROKEN / name / "home", keys=KeyRing.from_file(KEYS) if keyed else None)
    (f,) = [f for f in rep.findings if f.code.value == code]
    assert f.rel_path == f"{LEDGER1}/seg-00000002.log"
    assert (f.segment, f.frame_index, f.offset_bytes) == (2, index, offsets[index])


def test_an_erased_conversation_is_info_never_damage() -> None:
    rep = verify_home(BROKEN / "scope_erased/home", keys=KeyRing.from_file(KEYS))
    (f,) = [f for f in rep.findings if f.code.value == "scope_erased"]
    assert f.severity.value == "info"
    assert not rep.at_or_above(Severity.WARNING)


def test_verify_cli_exit_codes_and_fail_on_on_7_0_homes() -> None:
    runner = CliRunner()
    ok = runner.invoke(app, ["verify", str(SAMPLES / "v7")])
    assert ok.exit_code == 0, ok.output
    assert "7.0 segment directories: 5" in ok.output
    bad = runner.invoke(app, ["verify", str(BROKEN / "frame_bad_link/home")])
    assert bad.exit_code == 1
    assert "seg 2 frame 1" in bad.output
    warn = BROKEN / "object_without_grant/home"
    assert runner.invoke(app, ["verify", str(warn)]).exit_code == 0
    assert runner.invoke(app, ["verify", str(warn), "--fail-on", "warning"]).exit_code == 1
    info = BROKEN / "scope_erased/home"
    assert runner.invoke(app, ["verify", str(info), "--fail-on", "warning"]).exit_code == 0
    keyed = runner.invoke(app, ["verify", str(BROKEN / "frame_undecryptable/home"), "--keys", str(KEYS), "--json"])
    assert keyed.exit_code == 1
    missing = runner.invoke(app, ["verify", str(SAMPLES / "v7"), "--keys", str(SAMPLES / "no-such-keys.json")])
    assert missing.exit_code == 2


def _verify_in_a_fresh_process(home: Path, modules: tuple[str, ...]) -> tuple[str, list[str]]:
    """``vakaudit verify HOME --json`` in a new interpreter: its stdout, and which of ``modules``
    it had imported by the end."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from vakaudit.cli import main\n"
        "sys.argv = ['vakaudit', 'verify', sys.argv[1], '--json']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print('loaded:' + ','.join(m for m in {modules!r} if m in sys.modules), file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(home)], capture_output=True, text=True, check=False)
    assert '"layout": "g3"' in out.stdout, out.stderr
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("loaded:"), out.stderr
    return out.stdout, [m for m in last.removeprefix("loaded:").split(",") if m]


def test_verify_of_a_7_0_home_imports_no_dataframe_engine() -> None:
    """Keyless verify of a 7.0 home runs without pyarrow, polars or DuckDB (a fresh process).

    The sample's checkpoint is a JSONL-era side file, read by its kind's reader for its findings; no
    cross check reads a checkpoint's rows, so verify builds none of them (no Arrow batch: a side file
    whose rows a check reads, such as a cost log, does import pyarrow: tests/forensics/
    test_forensics_verify_imports.py)."""
    out, loaded = _verify_in_a_fresh_process(SAMPLES / "v7", ("pyarrow", "pyarrow.compute", "polars", "duckdb"))
    assert '"frames"' in out
    assert loaded == []


def test_keyless_verify_of_7_0_segments_and_chains_imports_no_pyarrow(tmp_path: Path) -> None:
    """Without a side file read by an Arrow reader (a copy of the sample without its checkpoint),
    keyless verify builds no Arrow object: pyarrow is never imported (a fresh process)."""
    import shutil

    home = tmp_path / "v7"
    shutil.copytree(SAMPLES / "v7", home, symlinks=True)
    shutil.rmtree(home / "agents/vak/checkpoints")
    out, loaded = _verify_in_a_fresh_process(home, ("pyarrow",))
    assert '"frames": 25' in out
    assert loaded == []


@pytest.mark.parametrize("name", NAMES)
def test_segment_directories_walked_on_threads_give_the_same_report(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading
    import time

    from vakaudit.forensics import home7

    expected, keyed = _readme(name)
    keys = KeyRing.from_file(KEYS) if keyed else None
    serial = verify_home(BROKEN / name / "home", keys=keys)
    before = threading.active_count()
    threads: set[int] = set()
    walk_one = home7._walk_one

    def recorded(item):  # noqa: ANN001, ANN202 - the walk's own argument and result
        threads.add(threading.get_ident())
        time.sleep(0.02)  # long enough for the other thread to take the next directory meanwhile
        return walk_one(item)

    shared: list[set[str]] = []
    walk_all = home7._walk_all

    def walks(work, sizes, hashed):  # noqa: ANN001, ANN202 - the walks' own arguments and results
        shared.append(hashed)  # the directories a helper may take
        return walk_all(work, sizes, hashed)

    monkeypatch.setattr(home7, "THREAD_MIN_BYTES", 0)
    monkeypatch.setattr(home7, "_walk_one", recorded)
    monkeypatch.setattr(home7, "_walk_all", walks)
    monkeypatch.setattr(home7.os, "cpu_count", lambda: 2)
    threaded = verify_home(BROKEN / name / "home", keys=keys)
    # this thread and the helper each walked directories when two could be shared, this one alone else
    assert len(threads) == (2 if len(shared[0]) >= 2 else 1)
    assert threading.active_count() == before  # the helper is gone when the walk is
    assert _codes(threaded.findings) == expected
    assert [f.to_dict() for f in threaded.findings] == [f.to_dict() for f in serial.findings]
    assert (threaded.frames, threaded.segment_dirs, threaded.bytes_verified) == (
        serial.frames, serial.segment_dirs, serial.bytes_verified)
