"""verify reads a side file whose rows no cross check reads for its findings alone (its reader's
``findings``: no rows, no Arrow), and skips a file its reader reads nothing of (``accepts``: a lock
file): the findings are those of reading every file through its reader, on a home whose side files
of every kind are damaged."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from vakaudit.artifacts import all_kinds
from vakaudit.forensics.home import verify_home
from vakaudit.scan.walk import iter_home_files

TINY = Path(__file__).resolve().parents[2] / "sample_homes" / "tiny"


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(TINY, home, symlinks=True)
    for hf in iter_home_files(home):
        path = home / hf.rel_path
        if hf.kind.reader is None or hf.kind.name == "session_ledger" or not path.is_file() or path.is_symlink():
            continue
        if path.suffix == ".jsonl":  # a line that does not parse, then an unterminated one
            with path.open("ab") as f:
                f.write(b'{"ts": "2026-01-01T00:00:00Z", "oops": \n{"ts": "2026-01-01T00:00:01Z"}')
        elif path.suffix in (".json", ".toml"):  # a document that no longer parses
            path.write_bytes(path.read_bytes()[: max(1, path.stat().st_size // 2)])
    return home


def _findings(home: Path, monkeypatch: pytest.MonkeyPatch, *, findings_only: bool) -> list[dict]:
    with monkeypatch.context() as m:
        if not findings_only:  # every file through its reader (a lock file too: no rows, no finding)
            for kind in all_kinds():
                for attr in ("findings", "accepts"):
                    if hasattr(kind.reader, attr):
                        m.delattr(kind.reader, attr)
        report = verify_home(home, jobs=0)
    return [f.to_dict() for f in report.findings]


def test_side_files_read_for_their_findings_give_what_their_readers_give(home: Path, monkeypatch) -> None:  # noqa: ANN001
    through_readers = _findings(home, monkeypatch, findings_only=False)
    alone = _findings(home, monkeypatch, findings_only=True)
    assert alone == through_readers
    # not vacuous: files of kinds no cross check reads, read the findings-only way, found damage
    from vakaudit.forensics.crosscheck import ROW_KINDS

    kinds = {hf.rel_path: hf.kind for hf in iter_home_files(home)}
    damaged = {kinds[f["rel_path"]].name for f in alone if f["rel_path"] in kinds}
    read_alone = {k.name for k in all_kinds() if getattr(k.reader, "findings", None) is not None} - ROW_KINDS
    assert len(damaged & read_alone) >= 3, damaged
    assert {"checkpoints", "config_files"} <= damaged
