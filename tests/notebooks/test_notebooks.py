"""The investigation notebooks run top to bottom and show what the data independently says.

Each notebook's code cells are executed in order in one fresh namespace with plain ``exec`` (cwd =
the repository root; Jupyter is not needed), then the values the notebook computed are compared with
expectations computed here without vakaudit: file sizes from ``os.lstat``, lines and JSON read with
the standard library, the broken homes' README lines, and the replay spec's rules.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import json
import os
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
NAMES = [
    "01-where-the-bytes-go.ipynb",
    "02-chain-forensics.ipynb",
    "03-replay-a-session.ipynb",
    "04-growth-what-if.ipynb",
]
THIRD_PARTY_ALLOWED = {"polars", "duckdb", "pyarrow"}


def _load(name: str) -> dict:
    return json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))


def _code_cells(nb: dict) -> list[str]:
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


@pytest.fixture(scope="module")
def run_notebook():
    """Execute a notebook's code cells in one namespace; temporary outputs are removed afterwards."""
    done: dict[str, dict] = {}

    def run(name: str) -> dict:
        if name not in done:
            ns: dict = {"__name__": "__notebook__"}
            cwd = os.getcwd()
            os.chdir(REPO)
            try:
                for i, src in enumerate(_code_cells(_load(name))):
                    exec(compile(src, f"{name}[cell {i}]", "exec"), ns)  # noqa: S102 - the notebook itself
            finally:
                os.chdir(cwd)
            done[name] = ns
        return done[name]

    yield run
    for ns in done.values():
        if "con" in ns:
            ns["con"].close()
        ns["WORK"].cleanup()


def _ledgers(home: Path) -> list[Path]:
    """Session ledgers found without vakaudit: every *.jsonl under a sessions/ directory."""
    return sorted(p for p in home.rglob("*.jsonl") if "sessions" in p.relative_to(home).parts)


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def _first_keys(pairs: list[tuple[str, object]]) -> dict:
    out: dict = {}
    for k, v in pairs:
        out.setdefault(k, v)
    return out


def _doc(raw: bytes) -> dict:
    """A ledger line as JSON; a duplicate key keeps its first value (work lines repeat `kind`,
    and the first one is the envelope's)."""
    return json.loads(raw, object_pairs_hook=_first_keys)


# --------------------------------------------------------------------------- every notebook


@pytest.mark.parametrize("name", NAMES)
def test_notebook_is_nbformat4_without_outputs_and_opens_with_its_question(name: str) -> None:
    nb = _load(name)
    assert nb["nbformat"] == 4
    assert nb["nbformat_minor"] == 5  # 4.5: every cell carries an id
    ids = [c["id"] for c in nb["cells"]]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", i) for i in ids)
    allowed = {"markdown": {"id", "cell_type", "metadata", "source"},
               "code": {"id", "cell_type", "metadata", "source", "outputs", "execution_count"}}  # fmt: skip
    assert all(set(c) == allowed[c["cell_type"]] for c in nb["cells"])
    first = nb["cells"][0]
    assert first["cell_type"] == "markdown"
    assert "".join(first["source"]).startswith("# ")
    assert "**Question:**" in "".join(first["source"])
    for c in nb["cells"]:
        if c["cell_type"] == "code":
            assert c["outputs"] == [], f"{name}: a code cell has stored outputs"
            assert c["execution_count"] is None


@pytest.mark.parametrize("name", NAMES)
def test_notebook_imports_only_public_vakaudit_names(name: str) -> None:
    stdlib = set(sys.stdlib_module_names)
    for src in _code_cells(_load(name)):
        tree = ast.parse(src)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    top = alias.name.split(".")[0]
                    assert top in stdlib or top in THIRD_PARTY_ALLOWED, f"{name}: import {alias.name}"
                    assert top != "vakaudit", (
                        f"{name}: use `from vakaudit... import name`, not import {alias.name}"
                    )
            elif isinstance(node, ast.ImportFrom):
                mod = node.module or ""
                top = mod.split(".")[0]
                if top != "vakaudit":
                    assert top in stdlib or top in THIRD_PARTY_ALLOWED, f"{name}: from {mod} import ..."
                    continue
                assert not any(part.startswith("_") for part in mod.split(".")), f"{name}: private {mod}"
                public = set(importlib.import_module(mod).__all__)
                for alias in node.names:
                    assert alias.name in public, f"{name}: {alias.name} is not in {mod}.__all__"
            elif isinstance(node, ast.Attribute):
                is_private = node.attr.startswith("_") and not node.attr.startswith("__")
                assert not is_private, f"{name}: uses private attribute {node.attr}"


# --------------------------------------------------------------------------- 01 where the bytes go


def test_01_byte_shares_add_up_to_the_home_measured_with_lstat(run_notebook, sample_homes: Path) -> None:
    ns = run_notebook("01-where-the-bytes-go.ipynb")
    home = sample_homes / "tiny"
    home_bytes = 0
    for dirpath, dirnames, filenames in os.walk(home):
        for n in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            home_bytes += os.lstat(os.path.join(dirpath, n)).st_size
    ledger_bytes = sum(p.stat().st_size for p in _ledgers(home))

    shares = ns["kind_share"]
    assert sum(shares["share"].to_list()) == pytest.approx(1.0, abs=1e-12)
    assert sum(shares["size_bytes"].to_list()) == home_bytes
    by_kind = dict(zip(shares["kind"].to_list(), shares["size_bytes"].to_list(), strict=True))
    assert by_kind["session_ledger"] == ledger_bytes
    assert shares["kind"].to_list()[0] == "session_ledger"  # the biggest, as the capacity report says

    overview = ns["overview"]
    assert overview["home_bytes"] == home_bytes
    assert overview["ledger_bytes"] == ledger_bytes
    assert overview["sessions"] == len(_ledgers(home))
    assert ns["analysis"].headline["home_bytes"] == home_bytes


def test_01_binding_fields_cover_every_binding_byte(run_notebook, sample_homes: Path) -> None:
    ns = run_notebook("01-where-the-bytes-go.ipynb")
    binding_lines: list[bytes] = []
    keys: set[str] = set()
    for p in _ledgers(sample_homes / "tiny"):
        for raw in _lines(p):
            doc = _doc(raw)
            if doc.get("kind") == "turn_capabilities_bound":
                binding_lines.append(raw)
                keys |= set(doc) - {"id", "parent_id", "ts", "prev_hash", "at_turn", "kind"}
    fields = ns["binding_fields"]
    # every line plus its LF, split over fields
    assert sum(fields["size_bytes"].to_list()) == sum(len(r) + 1 for r in binding_lines)
    assert set(fields["field"].to_list()) == keys | {"(envelope)"}
    assert sum(fields["share"].to_list()) == pytest.approx(1.0, abs=1e-12)
    envelope = fields.filter(fields["field"] == "(envelope)")
    assert envelope["entry_count"].to_list() == [len(binding_lines)]
    # the tool schemas are the heaviest member of a binding, measured directly on the first one
    first = _doc(binding_lines[0])
    sizes = {
        k: len(json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode()) for k, v in first.items()
    }
    assert fields["field"].to_list()[0] == max(keys, key=lambda k: sizes.get(k, 0))


def test_01_entries_frame_has_one_row_per_ledger_line(run_notebook, sample_homes: Path) -> None:
    ns = run_notebook("01-where-the-bytes-go.ipynb")
    lines = [raw for p in _ledgers(sample_homes / "tiny") for raw in _lines(p)]
    entries = ns["entries"]
    assert entries.height == len(lines)
    kinds: dict[str, int] = {}
    for raw in lines:
        k = _doc(raw)["kind"]
        kinds[k] = kinds.get(k, 0) + 1
    by_kind = ns["entries_by_kind"]
    assert dict(zip(by_kind["kind"].to_list(), by_kind["entry_count"].to_list(), strict=True)) == kinds
    assert ns["overview"]["entries"] == len(lines)


# --------------------------------------------------------------------------- 02 chain forensics


def _readme_expectations(home_dir: Path) -> tuple[set[str], int | None]:
    """Finding codes and (first) line number a broken home's README line promises."""
    text = (home_dir / "README.md").read_text(encoding="utf-8")
    expected = text.split("Expected findings:", 1)[1].strip().rstrip(".")
    if expected == "none":
        return set(), None
    codes = {re.match(r"\s*([a-z0-9_]+)", part).group(1) for part in expected.split(",")}
    m = re.search(r"\(line (\d+)\)", expected)
    return codes, int(m.group(1)) if m else None


def test_02_findings_are_what_each_broken_home_readme_promises(run_notebook, sample_homes: Path) -> None:
    ns = run_notebook("02-chain-forensics.ipynb")
    broken = sorted(d for d in (sample_homes / "broken").iterdir() if (d / "README.md").is_file())
    assert set(ns["codes_by_home"]) == {d.name for d in broken}
    findings = ns["findings"]
    for d in broken:
        codes, line_no = _readme_expectations(d)
        assert set(ns["codes_by_home"][d.name]) == codes, d.name
        rows = findings.filter(findings["home"] == d.name)
        assert set(rows["code"].to_list()) == codes, d.name
        if line_no is not None:
            assert line_no in rows["line_no"].to_list(), d.name


def test_02_tampered_line_is_located_at_its_byte_offset(run_notebook, sample_homes: Path) -> None:
    ns = run_notebook("02-chain-forensics.ipynb")
    home_dir = sample_homes / "broken" / "payload_byte_changed"
    _, line_no = _readme_expectations(home_dir)
    (ledger,) = _ledgers(home_dir / "home")
    data = ledger.read_bytes()
    lines = data.split(b"\n")
    offset = sum(len(raw) + 1 for raw in lines[: line_no - 1])

    located = ns["located"]
    assert located["line_no"] == line_no
    assert located["offset_bytes"] == offset
    assert located["end_offset_bytes"] == offset + len(lines[line_no - 1])
    assert ns["changed_line"] == lines[line_no - 1]
    # the successor recorded the digest the line had when it was written; it has another one now
    assert located["recorded_by_successor"] == _doc(lines[line_no])["prev_hash"]
    assert located["digest_now"] == hashlib.sha256(lines[line_no - 1]).hexdigest()
    assert located["digest_now"] != located["recorded_by_successor"]


def test_02_read_only_open_warns_about_the_broken_chain_and_keeps_the_entries(run_notebook) -> None:
    ns = run_notebook("02-chain-forensics.ipynb")
    ledger = ns["ledger_path"]
    assert ns["reader_entry_count"] == len(_lines(ledger))
    assert len(ns["reader_warnings"]) == 1
    # vak's reader names the line whose prev_hash fails to match: the successor of the edited line 2
    assert "hash chain" in ns["reader_warnings"][0]
    assert "line(s) 3" in ns["reader_warnings"][0]


def test_02_append_after_seal_is_proven_and_truncation_is_caught(run_notebook, sample_homes: Path) -> None:
    ns = run_notebook("02-chain-forensics.ipynb")
    (original,) = _ledgers(sample_homes / "broken" / "clean" / "home")
    sealed = original.read_bytes()
    (rec,) = ns["seal"]["files"]
    assert rec["size_bytes"] == len(sealed)
    assert rec["line_count"] == sealed.count(b"\n")
    assert rec["head_digest"] == hashlib.sha256(sealed.rstrip(b"\n").split(b"\n")[-1]).hexdigest()
    assert ns["after_append"] == []
    assert ns["after_append_report"].counts()["error"] == 0
    # the copy grew by exactly one line, the sealed bytes untouched; the evidence did not change
    assert original.read_bytes() == sealed

    cut = ns["cut_at"]
    (violation,) = ns["after_truncate"]
    assert violation.code == "append_only_violation"
    assert violation.severity == "error"
    assert violation.line_no == sealed[:cut].count(b"\n") + 1  # the line the cut went through
    assert violation.offset_bytes == sealed[:cut].rfind(b"\n") + 1
    assert violation.actual == f"{cut} bytes"


# --------------------------------------------------------------------------- 03 replay


def _active_chain_execute_receipts(ledger: Path) -> list[dict]:
    docs = [_doc(raw) for raw in _lines(ledger)]
    by_id = {d["id"]: d for d in docs}
    chain: set[str] = set()
    cur: str | None = docs[-1]["id"]
    while cur is not None and cur not in chain:
        chain.add(cur)
        cur = by_id[cur]["parent_id"]
    return [d for d in docs if d["id"] in chain and d["kind"] == "receipt" and d.get("purpose") == "execute"]


def test_03_one_step_per_execute_receipt_on_the_active_chain(run_notebook) -> None:
    ns = run_notebook("03-replay-a-session.ipynb")
    receipts = _active_chain_execute_receipts(ns["LEDGER"])
    table = ns["step_table"]
    assert table["receipt_id"].to_list() == [r["id"] for r in receipts]
    assert table["model"].to_list() == [r["model"] for r in receipts]
    assert "fail" not in table["status"].to_list()
    assert set(table["status"].to_list()) <= {"pass", "not_checkable"}


def test_03_prefix_breaks_are_where_vak_logged_prefix_changed(run_notebook) -> None:
    # replay.md: vak appends a `prefix-changed` activity right before the execute receipt whose
    # prefix digest differs from the newest earlier one
    ns = run_notebook("03-replay-a-session.ipynb")
    docs = [_doc(raw) for raw in _lines(ns["LEDGER"])]
    after_changed = []
    for prev, doc in zip(docs, docs[1:], strict=False):
        if prev["kind"] == "activity" and "prefix-changed" in json.dumps(prev) and doc["kind"] == "receipt":
            after_changed.append(doc["id"])
    digests = [r.get("prefix_digest") for r in _active_chain_execute_receipts(ns["LEDGER"])]
    moved = sum(1 for a, b in zip(digests, digests[1:], strict=False) if a and b and a != b)
    assert after_changed and len(after_changed) == moved
    assert ns["breaks"]["receipt_id"].to_list() == after_changed


def test_03_anthropic_body_structure(run_notebook) -> None:
    ns = run_notebook("03-replay-a-session.ipynb")
    s = ns["structure"]
    last_receipt = _active_chain_execute_receipts(ns["LEDGER"])[-1]
    assert s["model"] == last_receipt["model"]
    assert {"model", "messages", "system", "max_tokens"} <= set(s["keys"])
    assert s["system_blocks"] == 1
    roles = [role for role, _ in s["messages"]]
    assert roles[0] == "user"
    assert all(a != b for a, b in zip(roles, roles[1:], strict=False))  # roles alternate
    assert 1 <= s["cache_control_marks"] <= 3  # replay.md §14: up to 3 hinted messages
    # the tools of the binding in force: the last turn_capabilities_bound before that receipt
    docs = [_doc(raw) for raw in _lines(ns["LEDGER"])]
    upto = next(i for i, d in enumerate(docs) if d["id"] == last_receipt["id"])
    binding = next(d for d in reversed(docs[:upto]) if d["kind"] == "turn_capabilities_bound")
    assert s["tool_count"] >= len(binding["tool_schemas"])
    # structure only: every string shown is a key, a role, a block type or the model name
    shown = {s["model"], *s["keys"]} | {role for role, _ in s["messages"]}
    shown |= {t for _, types in s["messages"] for t in types}
    assert shown <= {
        s["model"],
        *s["keys"],
        "user",
        "assistant",
        "text",
        "tool_use",
        "tool_result",
        "thinking",
    }


# --------------------------------------------------------------------------- 04 growth


def test_04_projection_is_measured_bytes_per_turn_times_turns(run_notebook) -> None:
    ns = run_notebook("04-growth-what-if.ipynb")
    synth, home = ns["synth"], ns["HOME"]
    ledger_bytes = sum(p.stat().st_size for p in _ledgers(home))
    assert ns["analysis"].headline["turns"] == synth.turns == 12
    rows = {r["artifact"]: r for r in ns["projection"]["rows"]}
    per_turn = ledger_bytes / synth.turns
    assert rows["session_ledger"]["per_turn_bytes"] == pytest.approx(per_turn, rel=1e-5)
    for n in ns["TURNS"]:
        assert rows["session_ledger"]["projected_bytes"][str(n)] == pytest.approx(per_turn * n, rel=1e-5)
    assert ns["projection"]["estimate"] is True
    assert ns["growth"]["artifact"].to_list() == [r["artifact"] for r in ns["projection"]["rows"]]


def test_04_without_repeated_bindings_removes_exactly_the_repeated_binding_bytes(run_notebook) -> None:
    ns = run_notebook("04-growth-what-if.ipynb")
    marker = b'"kind":"turn_capabilities_bound"'
    repeated, repeated_bytes, total = 0, 0, 0
    for p in _ledgers(ns["HOME"]):
        previous: bytes | None = None
        for raw in _lines(p):
            total += len(raw) + 1
            if marker in raw:
                body = raw.split(marker, 1)[1]  # the payload after the envelope
                if body == previous:
                    repeated += 1
                    repeated_bytes += len(raw) + 1
                previous = body
    w = ns["without"]
    assert w["ledger_bytes"] == total
    assert repeated > 0
    assert w["repeated_bindings"] == repeated
    assert w["repeated_binding_bytes"] == repeated_bytes
    # each removed binding is replaced by a short reference line (modelled: under 1 KB each)
    assert total - repeated_bytes < w["ledger_bytes_without"] < total - repeated_bytes + 1024 * repeated
    turns = ns["synth"].turns
    for row in ns["what_if"].iter_rows(named=True):
        n = row["turns"]
        assert row["without_repeated_bindings"] == pytest.approx(
            w["ledger_bytes_without"] / turns * n, rel=1e-5
        )
        assert 0 < row["saved_share"] < 1
