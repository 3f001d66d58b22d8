"""Memory: the Markdown notes the ``remember`` tool appends to and people edit (vak-core ``memory.rs``).

Lives at ``<sessions_home>/memory/<wskey>/MEMORY.md`` (workspace tier) and ``memory/user/USER.md``
(profile tier), with ``MEMORY.lock`` / ``USER.lock`` (create-new, ``pid=<n>``, stale after 60 s) and
rewrite temp files ``MEMORY.tmp.<pid>`` beside them; all belong to this kind (only the ``.md`` files
give rows). Append: ``## <ts> [<kind>] tag=<tag> session=<sid>`` + text + a blank line, ``write_all``
then ``sync_data``. Forget/amend rewrite via tmp + ``sync_all`` + rename. Never pruned by age; read
whole per turn that projects memory (home.md §7.1). The REGISTRY's ``learning`` entry (no writer
found, D10) is kept with this kind too.

Rows: one per note, parsed like vak: a ``## `` line whose first token is an RFC 3339 timestamp opens
a note, then optional ``[kind]`` (default ``note``), ``tag=`` and ``session=`` (leftover tokens become
the tag when ``tag=`` is missing). ``note_id`` = FNV-1a of the header line. Bytes before the first
header give a row with null ``note_id`` (vak ignores them) so sizes add up; ``text_bytes`` = 0 marks a
note vak drops for its empty body. The note text itself is not stored.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from vakaudit.artifacts import _declare as decl
from vakaudit.artifacts._base import (
    ArtifactKind,
    Baseline7,
    Discipline,
    ReadContext,
    RegistryClass,
    WriteCard,
    WriteGroup,
)
from vakaudit.artifacts._files import parent_name
from vakaudit.artifacts._timestamps import TIMESTAMP, timestamp
from vakaudit.ledger.keys import fnv1a64

if TYPE_CHECKING:
    import pyarrow as pa

_SCHEMA = decl.schema(
    [
        decl.field("rel_path", decl.string(), nullable=False),
        decl.field("home_scope", decl.string(), nullable=False),
        decl.field("memory_scope", decl.string()),  # the <wskey> directory, or "user"
        decl.field("tier", decl.string()),  # workspace | profile
        decl.field("line_no", decl.int64(), nullable=False),  # of the header line
        decl.field("offset_bytes", decl.int64(), nullable=False),
        decl.field("size_bytes", decl.int64(), nullable=False),  # header through the line before the next header
        decl.field("note_id", decl.string()),
        decl.field("ts", decl.string()),
        decl.field("ts_at", TIMESTAMP),
        decl.field("kind", decl.string()),
        decl.field("tag", decl.string()),
        decl.field("session", decl.string()),
        decl.field("text_bytes", decl.int64()),  # trimmed body size
        decl.field("body_lines", decl.int64()),
    ]
)


def parse_header(raw: bytes) -> dict[str, Any] | None:
    """Fields of a note header line, or None when the line does not open a note."""
    if not raw.startswith(b"## "):
        return None
    tokens = raw[3:].decode("utf-8", "replace").split()
    if not tokens or timestamp(tokens[0]) is None:
        return None
    ts, rest = tokens[0], tokens[1:]
    kind = "note"
    if rest and rest[0].startswith("[") and rest[0].endswith("]"):
        kind, rest = rest[0][1:-1], rest[1:]
    tag = session = None
    leftover = []
    for tok in rest:
        if tok.startswith("tag=") and tag is None:
            tag = tok[4:]
        elif tok.startswith("session=") and session is None:
            session = tok[8:]
        else:
            leftover.append(tok)
    if tag is None and leftover:
        tag = " ".join(leftover)
    return {
        "note_id": f"{fnv1a64(raw):016x}",
        "ts": ts,
        "ts_at": timestamp(ts),
        "kind": kind,
        "tag": tag,
        "session": session,
    }


def reader(ctx: ReadContext) -> Iterator[pa.RecordBatch]:
    """One row per note of a MEMORY.md / USER.md file; locks and temp files give none."""
    name = ctx.rel_path.rsplit("/", 1)[-1]
    if not name.endswith(".md"):
        return
    scope = parent_name(ctx.rel_path)
    base = {
        "rel_path": ctx.rel_path,
        "home_scope": ctx.home_scope,
        "memory_scope": scope,
        "tier": "profile" if name == "USER.md" else "workspace",
    }
    from vakaudit.artifacts._batches import BatchBuilder  # the Arrow side, on the first file read

    builder = BatchBuilder(_SCHEMA.arrow())
    note: dict[str, Any] | None = None
    body: list[bytes] = []

    def close() -> pa.RecordBatch | None:
        text = b"\n".join(body).strip()
        row = {
            **base,
            **note,
            "text_bytes": len(text) if note.get("note_id") else None,
            "body_lines": len(body),
        }
        return builder.add(row[n] for n in _SCHEMA.arrow().names)

    from vakaudit.artifacts._lines import iter_lines  # the line reader, on the first file read

    with ctx.open() as f:
        for line in iter_lines(f, ctx.start_offset):
            header = parse_header(line.raw)
            if header is None and note is not None:
                body.append(line.raw)
                note["size_bytes"] += line.size
                continue
            if note is not None:
                batch = close()
                if batch is not None:
                    yield batch
            body = []
            fields = header or dict.fromkeys(("note_id", "ts", "ts_at", "kind", "tag", "session"))
            note = {"line_no": line.line_no, "offset_bytes": line.offset, "size_bytes": line.size, **fields}
            if header is None:
                body.append(line.raw)  # preamble: bytes before the first note
    if note is not None:
        batch = close()
        if batch is not None:
            yield batch
    batch = builder.flush()
    if batch is not None:
        yield batch


KIND = ArtifactKind(
    name="memory",
    title="Memory notes",
    patterns=("**/memory/**", "**/learning/**"),
    card=WriteCard(
        writer="remember tool -> append_note / append_profile_note; forget / amend — vak-core",
        trigger="the model remembers a note; a person edits the file",
        discipline="append + sync_data under a create-new lock; rewrite = tmp + sync_all + rename",
        barriers_per_write=1,
        read="whole file per turn that projects memory",
        bound="never age-pruned by design; only abandoned write artifacts are cleaned (24 h)",
        group=WriteGroup.MEMORY,
        read_class="flat",
        time_column="ts_at",
        time_rank=11,
        style=Discipline.APPEND_COMPACT,
    ),
    v7=Baseline7(('**/learning/**',), (45,), vak_class='Record', owner='vak-core'),
    registry_class=RegistryClass.DOCUMENT,
    description=__doc__,
    declared_schema=_SCHEMA,
    reader=reader,
    priority=5,  # the whole tree is this kind's (its *.lock and *.tmp.* files included)
)

__getattr__ = decl.exports(__name__, SCHEMA=_SCHEMA)
