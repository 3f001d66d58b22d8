"""The shared contract every artifact kind must pass (the write map is this registry).

Each kind: a description and a full write-map card; a schema whenever it has a reader, whose first
column is ``rel_path``; example paths built from each of its patterns (G1, G2 and nested-home
forms) classify to that very kind; a fixture mini-home in ``tests/artifacts/fixtures/<kind>/`` whose
files all classify to the kind and read into batches of exactly its schema; and scanning that
fixture as a home gives no reader failure and no undeclared file.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from vakaudit.artifacts import UNCLASSIFIED, ArtifactKind, DuplicateKindError, all_kinds, classify, get_kind
from vakaudit.artifacts._base import ReadContext, RegistryClass, WriteGroup
from vakaudit.findings import Finding
from vakaudit.scan.tables import CORE_TABLES

FIXTURES = Path(__file__).resolve().parent / "fixtures"
KINDS = [k for k in all_kinds() if k.name != UNCLASSIFIED]
SNAKE = re.compile(r"[a-z][a-z0-9_]*")


def _examples(pattern: str) -> list[str]:
    """Concrete paths a pattern must match: at the data root, in an agent home, in a nested home."""
    body = pattern.replace("**/", "\0").replace("**", "x9/y9")
    body = re.sub(r"\*", "x1", body).replace("?", "q")
    if body.startswith("\0"):
        rest = body[1:].replace("\0", "")
        return [rest, f"agents/vak/{rest}", f"agents/vak/agents/vak/{rest}"]
    return [body.replace("\0", "")]


def test_registry_has_the_ledger_and_unclassified_kinds() -> None:
    names = [k.name for k in all_kinds()]
    assert names == sorted(names)
    assert "session_ledger" in names and UNCLASSIFIED in names
    assert get_kind("session_ledger").append_only


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_kind_declares_its_write_card(kind: ArtifactKind) -> None:
    assert SNAKE.fullmatch(kind.name), kind.name
    assert kind.name not in CORE_TABLES, "a kind's table would shadow a core table"
    assert kind.title.strip()
    assert kind.description and len(kind.description.strip()) >= 40, "the module docstring is the description"
    card = kind.card
    for text in (card.writer, card.trigger, card.discipline, card.read, card.bound):
        assert text.strip()
    assert card.barriers_per_write >= 0
    assert isinstance(card.group, WriteGroup)
    assert card.read_class in ("flat", "session", "home")
    assert isinstance(kind.registry_class, RegistryClass)
    assert kind.all_patterns, "only the unclassified kind may have no pattern"


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_kind_schema_present_when_reader_present(kind: ArtifactKind) -> None:
    if kind.secret:
        assert kind.reader is None, "a secret kind is sized, never opened"
    if kind.reader is None:
        return
    assert isinstance(kind.schema, pa.Schema)
    first = kind.schema.field(0)
    assert first.name == "rel_path" and first.type == pa.string()
    assert len(set(kind.schema.names)) == len(kind.schema.names)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_kind_patterns_match_example_paths_and_win_them(kind: ArtifactKind) -> None:
    for pattern in kind.all_patterns:
        assert not pattern.startswith("/") and "\\" not in pattern, pattern
        for path in _examples(pattern):
            assert kind.matches(path), (pattern, path)
            assert classify(path).name == kind.name, f"{path} (from {pattern}) goes to {classify(path).name}"


@pytest.fixture(scope="module")
def synth_tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from vakaudit.synth import build_home

    out = tmp_path_factory.mktemp("registry") / "tiny"
    build_home(out, profile="tiny", seed=7, fsync=False)
    return out


def _fixture_home(kind: ArtifactKind, synth_tiny: Path, tmp_path: Path) -> tuple[Path, list[str]]:
    """The kind's committed fixture home, or (binary kinds such as store.db) its files of a synth home."""
    root = FIXTURES / kind.name
    if root.is_dir():
        return root, sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    rels = sorted(
        p.relative_to(synth_tiny).as_posix()
        for p in synth_tiny.rglob("*")
        if p.is_file() and classify(p.relative_to(synth_tiny).as_posix()).name == kind.name
    )
    home = tmp_path / "fixture-home"
    for rel in rels:
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(synth_tiny / rel, home / rel)
    return home, rels


@pytest.mark.parametrize("kind", [k for k in KINDS if k.reader is not None], ids=lambda k: k.name)
def test_kind_fixture_files_classify_and_read_into_its_schema(
    kind: ArtifactKind, synth_tiny: Path, tmp_path: Path
) -> None:
    home, files = _fixture_home(kind, synth_tiny, tmp_path)
    assert files, (
        f"tests/artifacts/fixtures/{kind.name}/ (or the synth tiny home) must hold a file of this kind"
    )
    for rel in files:
        assert classify(rel).name == kind.name, rel
    assert kind.reader is not None and kind.schema is not None
    rows = 0
    for rel in files:
        findings: list[Finding] = []
        sid = kind.session_id_of(rel) if kind.session_id_of else None
        scope = rel.rsplit("/", 1)[0] if "/" in rel else ""
        ctx = ReadContext(home, rel, scope, sid, emit=findings.append)
        for batch in kind.reader(ctx):
            assert batch.schema.equals(kind.schema), rel
            assert set(batch.column("rel_path").to_pylist()) <= {rel}
            rows += batch.num_rows
    assert rows > 0, "the fixture must give at least one row"


@pytest.mark.parametrize("kind", [k for k in KINDS if k.reader is not None], ids=lambda k: k.name)
def test_kind_fixture_scans_as_a_home(kind: ArtifactKind, synth_tiny: Path, tmp_path: Path) -> None:
    from vakaudit.scan import scan_home

    home, _ = _fixture_home(kind, synth_tiny, tmp_path)
    result = scan_home(home, out=tmp_path / "scan", jobs=1)
    codes = result.findings_by_code()
    assert "reader_failed" not in codes
    assert "undeclared_file" not in codes
    files = result.table("files")
    assert set(files["kind"].to_pylist()) == {kind.name}
    table = "entries" if kind.name == "session_ledger" else kind.name
    assert result.row_counts[table] > 0


def test_unclassified_catches_what_nothing_else_claims() -> None:
    kind = classify("no/such/artifact.bin")
    assert kind.name == UNCLASSIFIED
    assert kind.registry_class is RegistryClass.UNDECLARED
    assert kind.reader is None and kind.all_patterns == ()


def test_duplicate_kind_name_fails_loudly(kind_module) -> None:  # noqa: ANN001
    kind_module("zz_duplicate_cost_log", "from vakaudit.artifacts.cost_log import KIND as _K\nKIND = _K\n")
    with pytest.raises(DuplicateKindError, match="cost_log"):
        all_kinds()
    kind_module.reset()
    assert "cost_log" in [k.name for k in all_kinds()]


def test_classify_prefers_priority_then_the_most_specific_pattern() -> None:
    # a ledger under an agent home, the nested-home defect, and the pre-3.2 data-root layout
    for rel in (
        "agents/vak/sessions/2599eb06cf360587/s.jsonl",
        "agents/vak/agents/vak/sessions/k/s.jsonl",
        "sessions/k/s.jsonl",
    ):
        assert classify(rel).name == "session_ledger"
    # other files in a sessions directory are not ledgers
    assert classify("agents/vak/sessions/k/agent-admission.lock").name != "session_ledger"


def test_the_registry_loads_without_pyarrow_and_builds_a_schema_on_first_use() -> None:
    """The registry imports every kind module; none builds an Arrow object at import (a fresh
    process). The first use of a kind's ``schema`` imports pyarrow and gives the declared columns."""
    import subprocess

    code = (
        "import sys\n"
        "import vakaudit.artifacts as a\n"
        "kinds = a.all_kinds()\n"
        "a.classify('agents/vak/cost-log.jsonl')\n"
        "print('pyarrow' in sys.modules, len(kinds))\n"
        "s = a.get_kind('cost_log').schema\n"
        "import pyarrow as pa\n"
        "print(isinstance(s, pa.Schema), s.field('usd').type == pa.float64(), s.field('ts_at').type)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, after = out.stdout.splitlines()
    assert before.split()[0] == "False" and int(before.split()[1]) > 40, out.stdout
    assert after == "True True timestamp[us, tz=UTC]", out.stdout


def test_a_declared_schema_is_the_pyarrow_schema_written_by_hand() -> None:
    # the kind's declaration against the same columns written with pyarrow directly
    from vakaudit.artifacts.cost_log import ROWS

    common = [pa.field("rel_path", pa.string(), nullable=False), pa.field("home_scope", pa.string(), nullable=False),
              pa.field("line_no", pa.int64(), nullable=False), pa.field("offset_bytes", pa.int64(), nullable=False),
              pa.field("size_bytes", pa.int64(), nullable=False)]  # fmt: skip
    ts = pa.timestamp("us", tz="UTC")
    rows = [pa.field("ts", pa.string()), pa.field("ts_at", ts), pa.field("model", pa.string()),
            pa.field("provider", pa.string()), pa.field("input_tokens", pa.int64()),
            pa.field("output_tokens", pa.int64()), pa.field("cache_read_input_tokens", pa.int64()),
            pa.field("usd", pa.float64()), pa.field("source", pa.string()), pa.field("session_id", pa.string())]  # fmt: skip
    trace = [pa.field(n, pa.string()) for n in ("actor", "trace", "trace_run", "trace_session")]
    assert get_kind("cost_log").schema.equals(pa.schema(common + rows + trace), check_metadata=True)
    assert ROWS.schema.equals(get_kind("cost_log").schema)
