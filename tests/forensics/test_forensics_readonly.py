"""verify, seal and timeline leave every byte, mtime and ctime of the home as it was."""

from __future__ import annotations

import os
from pathlib import Path

from typer.testing import CliRunner

from vakaudit.cli import app


def _snapshot(home: Path) -> dict[str, tuple]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(home):
        for name in sorted(dirnames + filenames):
            p = Path(dirpath) / name
            st = os.lstat(p)
            data = (
                p.read_bytes()
                if p.is_file() and not p.is_symlink()
                else os.readlink(p)
                if p.is_symlink()
                else None
            )
            out[p.relative_to(home).as_posix()] = (
                st.st_mode,
                st.st_size,
                st.st_mtime_ns,
                st.st_ctime_ns,
                data,
            )
    return out


def test_home_unchanged_after_verify_seal_and_timeline(tmp_path: Path) -> None:
    from vakaudit.synth import build_home

    home = tmp_path / "home"
    build_home(home, profile="tiny", fsync=False)
    before = _snapshot(home)
    runner = CliRunner()
    seal = tmp_path / "seal.json"
    assert runner.invoke(app, ["seal", str(home), "-o", str(seal)]).exit_code == 0
    assert runner.invoke(app, ["verify", str(home), "--json", "--deep", "--since", str(seal)]).exit_code == 0
    assert runner.invoke(app, ["verify", str(home)]).exit_code == 0
    for fmt in ("jsonl", "csv"):
        res = runner.invoke(app, ["timeline", str(home), "-o", str(tmp_path / f"t.{fmt}"), "--format", fmt])
        assert res.exit_code == 0, res.output
    assert _snapshot(home) == before
