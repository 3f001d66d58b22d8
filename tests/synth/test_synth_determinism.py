"""Same seed and options give a byte-identical home; the fdatasync switch changes no byte."""

from __future__ import annotations

from pathlib import Path

from vakaudit.synth import build_home


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _dirs(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_dir())


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    build_home(tmp_path / "a", profile="tiny", seed=11, layout="g2", fsync=True)
    build_home(tmp_path / "b", profile="tiny", seed=11, layout="g2", fsync=False)
    a, b = _tree(tmp_path / "a"), _tree(tmp_path / "b")
    assert sorted(a) == sorted(b)
    different = [name for name in a if a[name] != b[name]]
    assert different == []  # includes cache/store.db
    assert _dirs(tmp_path / "a") == _dirs(tmp_path / "b")
    assert "cache/store.db" in a


def test_other_seed_other_home(tmp_path: Path) -> None:
    build_home(tmp_path / "a", profile="tiny", seed=1, fsync=False)
    build_home(tmp_path / "b", profile="tiny", seed=2, fsync=False)
    a, b = _tree(tmp_path / "a"), _tree(tmp_path / "b")
    ledgers_a = {k: v for k, v in a.items() if k.endswith(".jsonl") and "/sessions/" in k}
    ledgers_b = {k: v for k, v in b.items() if k.endswith(".jsonl") and "/sessions/" in k}
    assert ledgers_a and ledgers_b and set(ledgers_a.values()).isdisjoint(ledgers_b.values())


def test_layouts_differ_only_where_g2_adds_fields(tmp_path: Path) -> None:
    build_home(tmp_path / "g1", profile="tiny", seed=5, layout="g1", fsync=False)
    build_home(tmp_path / "g2", profile="tiny", seed=5, layout="g2", fsync=False)
    g1 = (tmp_path / "g1/agents/vak/routing-evidence.jsonl").read_bytes()
    g2 = (tmp_path / "g2/agents/vak/routing-evidence.jsonl").read_bytes()
    assert b'"trace"' not in g1 and b'"trace"' in g2
