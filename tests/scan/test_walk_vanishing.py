"""Files and directories that vanish while the walk is under way (a live home) are reported where
they were, and the walk goes on: deleted for real between the listing of their directory and their
turn."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from vakaudit.scan.walk import HomeFile, iter_home_files


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    for rel in ("a/1.json", "a/2.json", "a/3.json", "b/c/x.json", "b/d/y.json", "z.json"):
        p = home / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("{}\n")
    return home


def _walk(home: Path, after: str, act: Callable[[], object]) -> list[HomeFile]:
    """The whole walk of ``home``, with ``act`` done right after the file ``after`` was yielded."""
    walk = iter_home_files(home, layout="g2")
    seen = []
    for hf in walk:
        seen.append(hf)
        if hf.rel_path == after:
            act()
            break
    return seen + list(walk)


def test_a_file_deleted_after_its_directory_was_listed(tmp_path: Path) -> None:
    home = _home(tmp_path)
    seen = _walk(home, "a/1.json", (home / "a/2.json").unlink)  # listed with a/, gone before its stat
    by_path = {hf.rel_path: hf for hf in seen}
    assert [hf.rel_path for hf in seen] == ["a/1.json", "a/2.json", "a/3.json", "b/c/x.json", "b/d/y.json", "z.json"]
    gone = by_path["a/2.json"]
    assert (gone.size_bytes, gone.readable, gone.file_type) == (0, False, "other")
    assert [(f.code, f.rel_path) for f in gone.findings] == [("unreadable_file", "a/2.json")]
    assert "vanished" in gone.findings[0].message
    assert by_path["a/3.json"].readable and by_path["a/3.json"].size_bytes == 3


def test_a_directory_deleted_before_or_after_its_parent_was_listed(tmp_path: Path) -> None:
    home = _home(tmp_path)
    seen = _walk(home, "a/3.json", lambda: shutil.rmtree(home / "b/c"))  # b/ not listed yet: lists without c/
    assert [hf.rel_path for hf in seen] == ["a/1.json", "a/2.json", "a/3.json", "b/d/y.json", "z.json"]
    home = _home(tmp_path / "again")
    seen = _walk(home, "b/c/x.json", lambda: shutil.rmtree(home / "b/d"))  # listed with b/, gone before its listing
    assert [hf.rel_path for hf in seen] == ["a/1.json", "a/2.json", "a/3.json", "b/c/x.json", "b/d", "z.json"]
    gone = seen[4]
    assert (gone.size_bytes, gone.readable) == (0, False)
    assert [f.code for f in gone.findings] == ["unreadable_file"]
    assert gone.findings[0].message.startswith("directory cannot be listed")
