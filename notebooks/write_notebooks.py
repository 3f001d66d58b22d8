"""Write the investigation notebooks (nbformat 4, no outputs) from the cell sources below.

Run from the repository root: ``python notebooks/write_notebooks.py``. The notebooks stay thin: they
call vakaudit's public API and add a few lines of DuckDB or polars, nothing more.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent

SETUP = """\
import tempfile
from pathlib import Path

# Run from the repository root (or from notebooks/): every path below is relative to it.
ROOT = Path.cwd() if (Path.cwd() / "sample_homes").is_dir() else Path.cwd().parent
WORK = tempfile.TemporaryDirectory(prefix="vakaudit-notebook-")  # outputs go here, never into a home
OUT = Path(WORK.name)"""

NOTEBOOKS: dict[str, list[tuple[str, str]]] = {}

NOTEBOOKS["01-where-the-bytes-go.ipynb"] = [
    (
        "markdown",
        """\
# Where do the bytes of a vak home go?

**Question:** of all the bytes in a vak home, which artifact kinds hold them, and inside the session
ledgers, how much of a capability binding (`turn_capabilities_bound`) is each payload field?

We scan the committed sample home `sample_homes/tiny` into Parquet (in a temporary directory, never
inside the home), query the scan's DuckDB views, load the `entries` table into polars and finish with
the `overview` metric of `vakaudit.analyze`.""",
    ),
    (
        "code",
        SETUP
        + """

import polars as pl

from vakaudit.analyze import analyze
from vakaudit.scan import scan_home

HOME = ROOT / "sample_homes" / "tiny"
scan = scan_home(HOME, OUT / "scan", jobs=1)
scan.table_names""",
    ),
    (
        "markdown",
        """\
## Byte share per artifact kind

Every file of a home lands in exactly one kind (or `unclassified`), so the shares add up to 1.""",
    ),
    (
        "code",
        '''\
con = scan.duckdb()
kind_share = con.sql("""
    SELECT kind,
           count(*) AS file_count,
           sum(size_bytes) AS size_bytes,
           sum(size_bytes) / (SELECT sum(size_bytes) FROM files) AS share
    FROM files
    GROUP BY kind
    ORDER BY size_bytes DESC, kind
""").pl()
kind_share''',
    ),
    (
        "markdown",
        """\
## Bytes per payload field of the capability binding

`entry_fields` holds the bytes of every top-level payload member as written (`(envelope)` is the id,
parent, timestamp, hash, kind, braces and line end).""",
    ),
    (
        "code",
        '''\
binding_fields = con.sql("""
    SELECT field,
           sum(entry_count) AS entry_count,
           sum(size_bytes) AS size_bytes,
           sum(size_bytes) / sum(sum(size_bytes)) OVER () AS share
    FROM entry_fields
    WHERE kind = 'turn_capabilities_bound'
    GROUP BY field
    ORDER BY size_bytes DESC, field
""").pl()
binding_fields''',
    ),
    ("markdown", "## The `entries` table in polars: one row per ledger line"),
    (
        "code",
        """\
entries = pl.from_arrow(scan.table("entries"))
entries_by_kind = (
    entries.group_by("kind")
    .agg(pl.len().alias("entry_count"), pl.col("size_bytes").sum())
    .sort("size_bytes", descending=True)
)
entries_by_kind""",
    ),
    ("markdown", "## The analyze overview"),
    (
        "code",
        """\
analysis = analyze(scan)
overview = analysis["overview"].one()
overview""",
    ),
    (
        "code",
        """\
analysis.headline""",
    ),
]

NOTEBOOKS["02-chain-forensics.ipynb"] = [
    (
        "markdown",
        """\
# Chain forensics: is the evidence intact, and where exactly was it changed?

**Question:** which defects does `vakaudit` find in the committed broken homes, where precisely (line
and byte offset) was a tampered ledger changed, what does vak's own reader say when it opens that
ledger, and how do we prove that a home only *grew* between two points in time?

Each `sample_homes/broken/<name>/` holds one defect and a one-line `README.md` naming the expected
findings. Nothing in a home is written: the append-only demonstration works on a copy.""",
    ),
    (
        "code",
        SETUP
        + '''

import shutil

import polars as pl

from vakaudit import SessionLog
from vakaudit.forensics import read_seal, seal_home, verify_home, verify_since, write_seal

BROKEN = ROOT / "sample_homes" / "broken"''',
    ),
    ("markdown", "## Verify every broken home"),
    (
        "code",
        """\
reports = {d.name: verify_home(d / "home") for d in sorted(BROKEN.iterdir()) if (d / "home").is_dir()}
findings = pl.DataFrame(
    [{"home": name, **f.to_dict()} for name, rep in reports.items() for f in rep.findings],
    infer_schema_length=None,
)
findings.select("home", "code", "severity", "rel_path", "line_no", "offset_bytes", "message")""",
    ),
    (
        "code",
        """\
codes_by_home = {name: sorted({str(f.code) for f in rep.findings}) for name, rep in reports.items()}
codes_by_home""",
    ),
    (
        "markdown",
        """\
## Locate the changed line of a tampered ledger

In `payload_byte_changed` one byte of a line was edited after it was written. The chain cannot
say *which byte*, but it pins the *line*: its digest no longer equals the `prev_hash` its successor
recorded.""",
    ),
    (
        "code",
        """\
TAMPERED = BROKEN / "payload_byte_changed" / "home"
hit = next(f for f in reports["payload_byte_changed"].findings if f.code == "line_modified")
ledger_path = TAMPERED / hit.rel_path
data = ledger_path.read_bytes()
start = hit.offset_bytes
end = data.index(b"\\n", start)
changed_line = data[start:end]
located = {
    "rel_path": hit.rel_path,
    "line_no": hit.line_no,
    "offset_bytes": start,
    "end_offset_bytes": end,
    "line_bytes": len(changed_line),
    "recorded_by_successor": hit.expected,
    "digest_now": hit.actual,
}
located""",
    ),
    (
        "code",
        """\
changed_line[:200]""",
    ),
    (
        "markdown",
        """\
## What vak's reader says: `SessionLog.open_read_only`

The ledger reader follows vak's own rules: it reports the break where it *detects* it (the line whose
`prev_hash` no longer matches, the successor of the edited line) and still loads the entries. The
forensic verifier above goes one step further and names the edited line itself.""",
    ),
    (
        "code",
        """\
with SessionLog.open_read_only(ledger_path) as log:
    reader_warnings = list(log.warnings)
    reader_entry_count = len(log.entries)
reader_warnings, reader_entry_count""",
    ),
    (
        "markdown",
        """\
## Seal, append, prove: `vakaudit seal` + `verify --since`

Copy a clean home, seal it, append one entry through `SessionLog` (as vak would), and prove that the
sealed bytes are still there. Then truncate the copy to see what a violation looks like.""",
    ),
    (
        "code",
        """\
COPY = OUT / "home"
shutil.copytree(BROKEN / "clean" / "home", COPY, symlinks=True)
seal_path = OUT / "seal.json"
write_seal(seal_home(COPY), seal_path)
seal = read_seal(seal_path)
[(f["rel_path"], f["size_bytes"], f["line_count"]) for f in seal["files"]]""",
    ),
    (
        "code",
        """\
copy_ledger = COPY / seal["files"][0]["rel_path"]
with SessionLog.open(copy_ledger, fsync=False) as log:
    log.append_message({"role": "user", "content": [{"type": "text", "text": "one more question"}]})
after_append = verify_since(COPY, seal)
after_append_report = verify_home(COPY, since=seal)
after_append, after_append_report.counts()""",
    ),
    (
        "code",
        """\
sealed_size = seal["files"][0]["size_bytes"]
cut_at = sealed_size // 2
with open(copy_ledger, "r+b") as fh:  # the COPY, never the evidence
    fh.truncate(cut_at)
after_truncate = verify_since(COPY, seal)
[f.to_dict() for f in after_truncate]""",
    ),
]

NOTEBOOKS["03-replay-a-session.ipynb"] = [
    (
        "markdown",
        """\
# Replay a session: what did vak send at each step?

**Question:** for one session of the tiny sample home, which provider requests did vak send (one per
execute receipt), do the checks of the replay spec pass against what the ledger recorded, where did
the prompt-cache prefix break, and what does one reconstructed Anthropic request look like?

The request body is shown as *structure only* (roles, block types, counts), never text.""",
    ),
    (
        "code",
        SETUP
        + """

import polars as pl

from vakaudit import SessionLog
from vakaudit.replay import anthropic_body, iter_ledger_paths, iter_requests

HOME = ROOT / "sample_homes" / "tiny"


def app_version(path):
    with SessionLog.open_read_only(path) as log:
        return log.header.payload["contract"]["app_version"]


# The tiny home's 4.0.0 session: prefix digests on every receipt and one capability change.
LEDGER = next(p for p in iter_ledger_paths(HOME) if app_version(p) == "4.0.0")
steps = list(iter_requests(LEDGER))
len(steps)""",
    ),
    ("markdown", "## Steps and check statuses"),
    (
        "code",
        """\
step_table = pl.DataFrame([
    {
        "turn": s.turn,
        "step": s.step,
        "receipt_id": s.receipt_id,
        "regime": str(s.regime),
        "model": s.request.model,
        "message_count": len(s.request.messages),
        "message_chars": s.message_chars,
        "status": s.status,
        **{str(c.name): str(c.status) for c in s.checks},
    }
    for s in steps
])
step_table""",
    ),
    (
        "markdown",
        """\
## Prefix-cache breaks

A break is a step whose stable prefix (system prompt + tools) differs from the previous step's: the
provider's prompt cache cannot be reused there.""",
    ),
    (
        "code",
        """\
breaks = pl.DataFrame(
    [
        {"turn": s.turn, "step": s.step, "receipt_id": s.receipt_id,
         "system_prompt": s.prefix_break.system_prompt,
         "tools_added": len(s.prefix_break.tools_added),
         "tools_removed": len(s.prefix_break.tools_removed),
         "tools_changed": len(s.prefix_break.tools_changed)}
        for s in steps if s.prefix_break is not None
    ],
    schema={"turn": pl.Int64, "step": pl.Int64, "receipt_id": pl.String, "system_prompt": pl.Boolean,
            "tools_added": pl.Int64, "tools_removed": pl.Int64, "tools_changed": pl.Int64},
)
breaks""",
    ),
    ("markdown", "## One reconstructed Anthropic request body (structure only)"),
    (
        "code",
        """\
last = steps[-1]
body = anthropic_body(last.request)
structure = {
    "keys": sorted(body),
    "model": body["model"],
    "system_blocks": len(body["system"]),
    "tool_count": len(body.get("tools", [])),
    "messages": [(m["role"], [b.get("type") for b in m["content"]]) for m in body["messages"]],
    "cache_control_marks": sum("cache_control" in b for m in body["messages"] for b in m["content"]),
}
structure""",
    ),
]

NOTEBOOKS["04-growth-what-if.ipynb"] = [
    (
        "markdown",
        """\
# Growth what-if: how big at 1k, 10k and 100k turns?

**Question:** if a home keeps today's mix, how many bytes will each artifact hold after 1 000,
10 000 and 100 000 turns, and how much smaller would the session ledgers be if a capability binding
were written once per epoch instead of repeated every turn?

We synthesise a fresh home (profile `tiny`, 12 turns, seed 0: same arguments, same bytes), analyze it,
and read the projection. The projection is an **estimate** (its method is printed with it); the
figures it starts from are measured.""",
    ),
    (
        "code",
        SETUP
        + """

import polars as pl

from vakaudit.analyze import analyze
from vakaudit.synth import build_home

HOME = OUT / "home"
synth = build_home(HOME, profile="tiny", turns=12, seed=0, fsync=False)
TURNS = (1_000, 10_000, 100_000)
analysis = analyze(HOME, turns=TURNS, scan_out=OUT / "scan")
synth.sessions, synth.turns, analysis.headline["turns"]""",
    ),
    ("markdown", "## Projection per artifact (estimate)"),
    (
        "code",
        """\
projection = analysis.projection.to_dict()
growth = pl.DataFrame(
    [
        {"artifact": r["artifact"], "rule": r["rule"], "per_turn_bytes": r["per_turn_bytes"],
         **{f"bytes_at_{n}": r["projected_bytes"][str(n)] for n in TURNS}, "bound": r["bound"]}
        for r in projection["rows"]
    ],
    infer_schema_length=None,
)
print(projection["method"])
growth""",
    ),
    (
        "code",
        """\
projection["total_bytes"], projection["days_until"]""",
    ),
    (
        "markdown",
        """\
## Without repeated bindings

The measured bytes of every binding whose body repeats the session's previous binding, replaced by a
small reference line (its size is modelled).""",
    ),
    (
        "code",
        """\
without = analysis["ledger_without_repeated_bindings"].one()
rows = {r["artifact"]: r for r in projection["rows"]}
with_bindings = rows["session_ledger"]["projected_bytes"]
without_bindings = rows["session_ledger_without_repeated_bindings"]["projected_bytes"]
what_if = pl.DataFrame([
    {"turns": n, "ledger_bytes": with_bindings[str(n)], "without_repeated_bindings": without_bindings[str(n)],
     "saved_share": 1 - without_bindings[str(n)] / with_bindings[str(n)]}
    for n in TURNS
])
{k: without[k] for k in ("ledger_bytes", "repeated_bindings", "repeated_binding_bytes", "ledger_bytes_without")}""",
    ),
    (
        "code",
        """\
what_if""",
    ),
]


def cell(kind: str, source: str) -> dict:
    lines = source.splitlines(keepends=True)
    base = {"cell_type": kind, "metadata": {}, "source": lines}
    if kind == "code":
        base.update(execution_count=None, outputs=[])
    return base


def notebook(cells: list[tuple[str, str]]) -> dict:
    return {
        "cells": [cell(k, s) for k, s in cells],
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def main() -> None:
    for name, cells in NOTEBOOKS.items():
        nb = notebook(cells)
        for i, c in enumerate(nb["cells"]):
            c["id"] = f"{Path(name).stem[:2]}-{i:02d}"
        (HERE / name).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
