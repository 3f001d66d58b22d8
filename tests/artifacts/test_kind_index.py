"""Classification from the kind index (``vakaudit/artifacts/_index_data.py``) without importing every
kind module: the index is what the kind modules declare, from the very sources the package has,
classification through it answers as the glob rule over every kind does, it imports only the
modules of the kinds it returns, and an index of other sources or other kind modules is not used."""

from __future__ import annotations

import subprocess
import sys

import pytest
from artifact_kind_helpers import glob_rule

import vakaudit.artifacts as artifacts
from vakaudit.artifacts import _index, all_kinds


def _paths() -> list[str]:
    out = ["", "x.lock", "a/b/x.sock", "run.log", "cache", "tenants/t/keys/scopes/keys/00ff"]
    for kind in all_kinds():
        for pattern in kind.all_patterns:
            filled = pattern.replace("**/", "").replace("**", "d/e").replace("*", "q1").replace("?", "z")
            out += [filled, f"agents/vak/{filled}", f"{filled}/x"]
    return out


def _rule(rel_path: str, layout: str | None) -> str:
    """The best kind by the documented rule, over every kind module's own declaration."""
    found = glob_rule(rel_path, layout)
    return found[0][0] if found else "unclassified"


def test_the_index_is_what_the_kind_modules_declare() -> None:
    on_disk = _index.DATA_FILE.read_text(encoding="utf-8")
    digest = _index.sources_digest(_index.package_sources(artifacts.__path__))
    assert digest is not None
    assert on_disk == _index.source(artifacts.kind_modules(), digest), "run `python -m vakaudit.artifacts`"
    data = _index.entries()
    assert data is not None and data[0] == digest
    entries = data[1]
    by_name = {k.name: k for k in all_kinds()}
    assert sorted(e.name for e in entries) == sorted(by_name)
    for entry in entries:
        kind = by_name[entry.name]
        assert (entry.priority, entry.patterns, entry.all_patterns) == (kind.priority, kind.patterns, kind.all_patterns)
        assert sys.modules[f"vakaudit.artifacts.{entry.module}"].KIND is kind


@pytest.mark.parametrize("layout", [None, "g2", "g3"])
def test_classify_through_the_index_is_the_glob_rule(layout: str | None) -> None:
    paths = _paths()
    expected = {p: _rule(p, layout) for p in paths}
    artifacts._forget()
    try:
        got = {p: artifacts.classify(p, layout).name for p in paths}
        assert artifacts._PAIRS_OF[0] == artifacts._FROM_INDEX  # the index answered, not the registry
        assert artifacts._KINDS is None
    finally:
        artifacts._forget()
    assert got == expected


def test_a_fresh_process_imports_only_the_kinds_it_returns() -> None:
    code = (
        "import sys\n"
        "from vakaudit.artifacts import classify\n"
        "a = classify('agents/vak/sessions/w/0a1b/seg-00000001.log', 'g3').name\n"
        "b = classify('agents/vak/cost-log.jsonl', 'g2').name\n"
        "c = classify('no/such/thing.bin', 'g2').name\n"
        "mods = sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.startswith('vakaudit.artifacts.')"
        " and not m.rsplit('.', 1)[1].startswith('_'))\n"
        "print(a, b, c, ','.join(mods))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["session_ledger", "cost_log", "unclassified", "cost_log,session_ledger,unclassified"]


def test_an_index_without_some_kind_module_is_not_used(monkeypatch) -> None:  # noqa: ANN001
    data = _index.entries()
    assert data is not None
    digest, entries = data
    monkeypatch.setattr(_index, "entries", lambda: (digest, tuple(e for e in entries if e.module != "cost_log")))
    artifacts._forget()
    try:
        assert artifacts.classify("agents/vak/cost-log.jsonl", "g2").name == "cost_log"
        assert artifacts._PAIRS_OF[0] == artifacts._FROM_MODULES  # every module was read instead
    finally:
        monkeypatch.undo()
        artifacts._forget()


def test_a_source_of_the_package_changed_since_the_index_means_it_is_not_used(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Any file of the package counts, not only the kind modules: a shared module (here one more,
    with no kind in it) can change what the kinds declare, as ``_chain`` makes the record chains'
    patterns."""
    (tmp_path / "_shared_helper.py").write_text("SUFFIX = '/*'\n", encoding="utf-8")
    monkeypatch.setattr(artifacts, "__path__", [*artifacts.__path__, str(tmp_path)])
    artifacts._forget()
    try:
        assert artifacts.classify("agents/vak/cost-log.jsonl", "g2").name == "cost_log"
        assert artifacts._PAIRS_OF[0] == artifacts._FROM_MODULES
    finally:
        monkeypatch.undo()
        artifacts._forget()
    assert artifacts.classify("agents/vak/cost-log.jsonl", "g2").name == "cost_log"
    assert artifacts._PAIRS_OF[0] == artifacts._FROM_INDEX


def test_the_digest_covers_every_source_of_the_package_but_the_index() -> None:
    names = {name for name, _path in _index.package_sources(artifacts.__path__)}
    assert {"_chain.py", "_tenant.py", "_base.py", "__init__.py", "_index.py"} <= names
    assert {f"{m}.py" for m in artifacts._module_names()} <= names
    assert "_index_data.py" not in names


def test_a_kind_module_added_is_classified_without_regenerating_the_index(kind_module) -> None:  # noqa: ANN001
    kind_module(
        "zz_probe_kind",
        "from vakaudit.artifacts._base import ArtifactKind, RegistryClass, WriteCard, WriteGroup, Discipline\n"
        "KIND = ArtifactKind(name='zz_probe', title='Probe', patterns=('**/probe-only.jsonl',),\n"
        "    card=WriteCard(writer='w', trigger='t', discipline='d', barriers_per_write=0, read='r', bound='b',\n"
        "                   group=WriteGroup.EVIDENCE, read_class='flat', style=Discipline.APPEND),\n"
        "    registry_class=RegistryClass.RECORD, description='A probe.', priority=99)\n",
    )
    assert artifacts.classify("agents/vak/probe-only.jsonl", "g2").name == "zz_probe"
    kind_module.reset()
    assert artifacts.classify("agents/vak/probe-only.jsonl", "g2").name == "unclassified"
    assert artifacts._PAIRS_OF[0] == artifacts._FROM_INDEX


def test_the_sources_digest_follows_every_byte_and_name(tmp_path) -> None:  # noqa: ANN001
    import hashlib

    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_bytes(b"KIND = 1\n")
    b.write_bytes(b"")
    # by hand: each module in name order, its name, NUL, its length, NUL, then its bytes
    expected = hashlib.sha256(b"a\x009\x00KIND = 1\n" + b"b\x000\x00").hexdigest()
    assert _index.sources_digest([("b", b), ("a", a)]) == expected
    a.write_bytes(b"KIND = 2\n")
    assert _index.sources_digest([("a", a), ("b", b)]) != expected
    assert _index.sources_digest([("a", a), ("c", b)]) != _index.sources_digest([("a", a), ("b", b)])
    assert _index.sources_digest([("a", tmp_path / "missing.py")]) is None
