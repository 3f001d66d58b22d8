"""What sets a kind apart in a scan is declared by the kind, and every consumer in ``scan/`` reads the
declaration, for every kind of the registry: the table its rows go to (``table_name``: the tables a
scan writes, the parts the worker writes, the files ``turns`` and ``sessions`` are derived from),
whether it is read on from a saved state (``resumable``: the layout probe, task bundling, the
worker's one pass, the state the manifest keeps and the plan resumes from) and its ``read_cost``
(what tasks are bundled and ordered by)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from vakaudit.artifacts import UNCLASSIFIED, ArtifactKind, all_kinds, classify
from vakaudit.scan import plan
from vakaudit.scan.derive import SOURCE_TABLE, feeds_turns
from vakaudit.scan.manifest import ScanState, _manifest_entry
from vakaudit.scan.plan import _group, _Item, _plan
from vakaudit.scan.tables import CORE_TABLES, all_tables
from vakaudit.scan.walk import detect_layout, iter_home_files
from vakaudit.scan.worker import _run_task

KINDS = all_kinds()
FIXTURES = Path(__file__).resolve().parents[1] / "artifacts" / "fixtures"
KIB = 1 << 10


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_the_kind_table_is_one_a_scan_writes(kind: ArtifactKind) -> None:
    tables = all_tables()
    assert kind.table_name == (kind.table or kind.name)
    assert (kind.table is not None) == (kind.table_name in CORE_TABLES)  # a table of its own, or a core one
    if kind.schema is not None:
        assert tables[kind.table_name][0] == kind.schema
    else:
        assert kind.table is None and kind.resumable is None
    assert feeds_turns(kind.name) == (kind.table_name == SOURCE_TABLE)
    if kind.table_name == SOURCE_TABLE:  # entries rows stream in from a resumable read
        assert kind.resumable is not None


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_tasks_are_costed_and_bundled_as_the_kind_declares(kind: ArtifactKind) -> None:
    assert kind.read_cost > 0
    it = _Item(f"a/{kind.name}", kind.name, "", None, KIB, ScanState.FULL)
    assert plan._item_cost(it) == KIB * kind.read_cost + plan._COST_PER_FILE
    resumable = _Item("b/resumable", next(k.name for k in KINDS if k.resumable), "", None, KIB, ScanState.FULL)
    side = _Item("c/side", "cost_log", "", None, KIB, ScanState.FULL)
    tasks = _group([it, resumable, side])
    task_of = {i.rel_path: n for n, task in enumerate(tasks) for i in task}
    assert sorted(task_of) == sorted([it.rel_path, resumable.rel_path, side.rel_path])
    assert sum(map(len, tasks)) == 3
    # a resumable kind's files share a task (and its part) with other resumable files, never with side files
    assert (task_of[it.rel_path] == task_of[resumable.rel_path]) == (kind.resumable is not None)
    assert (task_of[it.rel_path] == task_of[side.rel_path]) == (kind.resumable is None)


def _jsonl_path(kind: ArtifactKind) -> str | None:
    """A JSONL-era path of the kind that classifies to it, ending in ``.jsonl``; None when it has none."""
    for pattern in kind.patterns:
        path = pattern.replace("**/", "agents/vak/").replace("*", "x1")
        if path.endswith(".jsonl") and classify(path, "g1").name == kind.name:
            return path
    return None


@pytest.mark.parametrize(
    "kind", [k for k in KINDS if k.reader is not None and _jsonl_path(k)], ids=lambda k: k.name
)
def test_the_layout_probe_reads_side_files_and_not_resumable_ones(kind: ArtifactKind, tmp_path: Path) -> None:
    """A G2 home's side ledgers carry a ``trace`` on their rows; a resumable kind's lines are no
    side ledger's, so a trace there does not make a home G2."""
    path = tmp_path / "home" / _jsonl_path(kind)
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"trace": {"trace_id": "t1"}}\n')
    assert detect_layout(tmp_path / "home") == ("g1" if kind.resumable is not None else "g2")


@pytest.fixture(scope="module")
def synth_tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from vakaudit.synth import build_home

    out = tmp_path_factory.mktemp("kinds") / "tiny"
    build_home(out, profile="tiny", seed=7, fsync=False)
    return out


def _fixture_home(kind: ArtifactKind, synth_tiny: Path, tmp_path: Path) -> Path:
    """A copy of the kind's committed fixture home (the test grows its files), or of its files in a
    synth home (a binary kind: store.db)."""
    home = tmp_path / "home"
    if (FIXTURES / kind.name).is_dir():
        shutil.copytree(FIXTURES / kind.name, home)
        return home
    for path in sorted(synth_tiny.rglob("*")):
        rel = path.relative_to(synth_tiny).as_posix()
        if path.is_file() and classify(rel, "g1").name == kind.name:
            (home / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, home / rel)
    return home


def _read(home: Path, out: Path, gen: int, prev: dict) -> tuple[list, dict, dict]:
    """Walk, plan, bundle and read the home as a scan does: (results, states, manifest entries)."""
    files = list(iter_home_files(home, layout="g1"))
    items, states, _ = _plan(files, prev, "g1", full=not prev)
    results = [r for n, task in enumerate(_group(items)) for r in _run_task(str(home), str(out), gen, n, task)]
    by_rel = {r.rel_path: r for r in results}
    manifest = {hf.rel_path: _manifest_entry(hf, by_rel.get(hf.rel_path), prev.get(hf.rel_path, {}), states)
                for hf in files}
    return results, states, manifest


@pytest.mark.parametrize("kind", [k for k in KINDS if k.reader is not None], ids=lambda k: k.name)
def test_the_worker_reads_the_kind_into_its_table_and_the_next_scan_resumes_it(
    kind: ArtifactKind, synth_tiny: Path, tmp_path: Path
) -> None:
    home = _fixture_home(kind, synth_tiny, tmp_path)
    out = tmp_path / "out"
    (out / "entries").mkdir(parents=True)
    results, states, manifest = _read(home, out, 1, {})
    mine = [r for r in results if classify(r.rel_path, "g1").name == kind.name]
    assert mine and not any(f.code == "reader_failed" for r in mine for f in r.findings)
    parts = {r.part for r in mine if r.part}
    assert parts and all(p.startswith(f"{kind.table_name}/") and (out / p).is_file() for p in parts)
    spec = kind.resumable
    if spec is not None:  # its state under its key; one entry_fields table per task
        assert all(spec.state_key in r.state for r in mine)
        assert all(spec.state(r.state[spec.state_key]).to_dict() == r.state[spec.state_key] for r in mine)
        assert len([r for r in mine if r.fields is not None]) == (1 if spec.fields is not None else 0)
    if not kind.append_only:
        return
    # grow one file by a copy of its last line: the next scan reads only that line, from the saved state
    grown = next(r.rel_path for r in mine if (home / r.rel_path).read_bytes().endswith(b"\n"))
    data = (home / grown).read_bytes()
    line = data.splitlines(keepends=True)[-1]
    (home / grown).write_bytes(data + line)
    again, states2, _ = _read(home, out, 2, manifest)
    assert states2[grown] == ScanState.APPEND
    assert {r.rel_path for r in again} == {grown}
    (r,) = again
    assert r.mode == ScanState.APPEND and r.bytes_scanned == len(line) and r.rows >= 1
    assert not any(f.code == "append_only_violation" for f in r.findings)


def test_every_kind_but_unclassified_is_in_the_parametrized_tests() -> None:
    assert UNCLASSIFIED in {k.name for k in KINDS} and len(KINDS) > 30


@pytest.fixture
def child_ledger_kind(kind_module):  # noqa: ANN001, ANN201
    """A second resumable kind, registered for the test: ledgers under ``children/`` whose rows go to
    ``entries`` like a session ledger's (a kind module and nothing else)."""
    from vakaudit.artifacts import get_kind

    kind_module(
        "zz_child_ledger",
        "import dataclasses\nfrom vakaudit.artifacts.session_ledger import KIND as _LEDGER\n"
        "KIND = dataclasses.replace(_LEDGER, name='child_ledger', title='Child ledgers',\n"
        "                           patterns=('**/children/*/*.jsonl',), v7=None)\n",
    )
    return get_kind("child_ledger")


def test_a_second_resumable_kind_is_scanned_read_on_and_derived_without_an_edit_in_scan(
    child_ledger_kind: ArtifactKind, tmp_path: Path
) -> None:
    from vakaudit.scan import scan_home

    ledger = FIXTURES / "session_ledger" / "agents/vak/sessions/2599eb06cf360587/basic.jsonl"
    home = tmp_path / "home"
    for rel in ("agents/vak/sessions/k1/a.jsonl", "agents/vak/children/k2/b.jsonl"):
        (home / rel).parent.mkdir(parents=True)
        shutil.copy2(ledger, home / rel)
    lines = ledger.read_bytes().count(b"\n")
    first = scan_home(home, out=tmp_path / "scan", jobs=1)
    files = {r["rel_path"]: r["kind"] for r in first.table("files").to_pylist()}
    assert files == {"agents/vak/sessions/k1/a.jsonl": "session_ledger",
                     "agents/vak/children/k2/b.jsonl": "child_ledger"}
    rows = first.table("entries")["rel_path"].to_pylist()
    assert rows.count("agents/vak/children/k2/b.jsonl") == rows.count("agents/vak/sessions/k1/a.jsonl") == lines
    sessions = sorted(first.table("sessions")["rel_path"].to_pylist())
    assert sessions == ["agents/vak/children/k2/b.jsonl", "agents/vak/sessions/k1/a.jsonl"]
    assert "child_ledger" not in all_tables()  # its rows are entries

    child = home / "agents/vak/children/k2/b.jsonl"
    data = child.read_bytes()
    child.write_bytes(data + data.splitlines(keepends=True)[-1])  # a repeated line: a finding, one more row
    again = scan_home(home, out=tmp_path / "scan", jobs=1)
    states = {r["rel_path"]: r["scan_state"] for r in again.table("files").to_pylist()}
    assert states == {"agents/vak/sessions/k1/a.jsonl": "unchanged", "agents/vak/children/k2/b.jsonl": "appended"}
    assert again.table("entries")["rel_path"].to_pylist().count("agents/vak/children/k2/b.jsonl") == lines + 1
