"""Fixtures of the report tests: the committed tiny home's scan, a hostile home, fixed clocks."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

FIXED = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
SECRET = "SECRET-PHRASE-7f3a-never-in-a-default-report"
SCRIPT_PAYLOAD = "</script><script>document.body.dataset.pwned=1</script>"
IMG_PAYLOAD = "<img src=x onerror=\"document.title='pwned'\">"


def fixed_clock() -> datetime:
    return FIXED


@pytest.fixture(scope="session")
def clock():
    """The fixed "generated on" clock (tests import nothing from conftest: names clash across folders)."""
    return fixed_clock


@pytest.fixture(scope="session")
def payloads() -> dict[str, str]:
    return {"secret": SECRET, "script": SCRIPT_PAYLOAD, "img": IMG_PAYLOAD}


@pytest.fixture(scope="session")
def tiny_home(sample_homes: Path) -> Path:
    home = sample_homes / "tiny"
    if not home.is_dir():
        pytest.fail(f"committed sample home {home} is missing")
    return home


@pytest.fixture(scope="session")
def tiny_scan(tiny_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from vakaudit.scan import scan_home

    out = tmp_path_factory.mktemp("report") / "tiny-scan"
    scan_home(tiny_home, out=out, jobs=1)
    return out


@pytest.fixture(scope="session")
def tiny_inputs(tiny_scan: Path):
    from vakaudit.report import load_inputs

    inputs = load_inputs(tiny_scan, clock=fixed_clock)
    yield inputs
    inputs.con.close()


@pytest.fixture(scope="session")
def tiny_html(tiny_inputs) -> str:
    from vakaudit.report import render_inputs

    return render_inputs(tiny_inputs, "html")


@pytest.fixture(scope="session")
def hostile_home(tiny_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny home plus one ledger whose text, entry kind and field name are markup payloads, a
    message carrying a secret phrase, and an undeclared file whose name is an HTML tag."""
    from vakaudit.ledger import SessionLog

    home = tmp_path_factory.mktemp("report") / "hostile-home"
    shutil.copytree(tiny_home, home, symlinks=True)
    session_id = "019fd300-0000-7000-8000-000000000001"
    path = home / "agents/vak/sessions/0d994828fe15217e" / f"{session_id}.jsonl"
    ticks = iter(range(1_786_000_000_000_000_000, 1_786_000_100_000_000_000, 1_000_000_000))
    ids = iter(f"019fd300-0000-7000-8000-{n:012d}" for n in range(2, 100))
    header = {
        "session_id": session_id,
        "created_at": "2026-08-06T00:00:00Z",
        "cwd": "/work/" + IMG_PAYLOAD,
        "title": SCRIPT_PAYLOAD + SECRET,
    }
    log = SessionLog.create(path, header, clock=lambda: next(ticks), new_id=lambda: next(ids), fsync=False)
    try:
        text = f"{SCRIPT_PAYLOAD} {IMG_PAYLOAD} {SECRET}"
        log.append_message({"role": "user", "content": [{"type": "text", "text": text}]})
        log.append("intent", {"note": text})
        log.append_message({"role": "assistant", "content": [{"type": "text", "text": text}]})
        log.append(SCRIPT_PAYLOAD, {IMG_PAYLOAD: SECRET})
    finally:
        log.close()
    (home / "agents/vak" / f"{IMG_PAYLOAD}.txt").write_text(SECRET + "\n", encoding="utf-8")
    return home


@pytest.fixture(scope="session")
def hostile_inputs(hostile_home: Path, tmp_path_factory: pytest.TempPathFactory):
    from vakaudit.report import load_inputs

    inputs = load_inputs(
        hostile_home,
        include_content=True,
        clock=fixed_clock,
        scan_out=tmp_path_factory.mktemp("report") / "hostile-scan",
    )
    yield inputs
    inputs.con.close()


@pytest.fixture(scope="session")
def synth_v7(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A small synthetic 7.0 home (two sessions of 20 turns) and its key file, written beside it."""
    from tests.synth_homes import synth_v7 as write

    return write(tmp_path_factory.mktemp("synth-v7"), "--turns", "40", "--sessions", "2")
