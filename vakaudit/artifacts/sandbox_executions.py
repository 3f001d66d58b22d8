"""Sandbox executions: every SandboxEvent the bash (and other execution) tools emit, per session.

Lives at ``<sessions_home>/sandbox/executions/<session_id>.jsonl``; in G2 under the server Core's own
agent home whichever agent owns the session (D25). Written by vak-server
``append_session_sandbox_event`` while streaming to the Workbench: start, each stdout/stderr chunk
(about 8 KB max), a telemetry row every 500 ms, artifacts, finish — open + append + close per
event, no fsync, no bound (2 rows/s for a command's whole life). Read whole per
``/sandbox/executions`` request (home.md §6.1).

Events are tagged by ``kind`` (PascalCase) and carry no timestamp; order in the file is the only
sequence. Unconfirmed whether G1/G2 lines wrap the event: a top-level ``event``/``sandbox_event``
object with a ``kind`` is unwrapped and wrapper keys ``ts``/``execution_id``/``tool_use_id`` are
kept. Output text is not stored: ``chunk_bytes`` is the UTF-8 size of a chunk, ``code_preview_bytes``
of the preview. G3 ``Output`` rows give ``stream``.

In a 7.0 home it is a record chain (baseline7.md §3.7, §9.2): ``agents/<a>/sandbox/executions/<session id>/``, every frame sealed under the conversation key.
"""

from __future__ import annotations

from typing import Any

from vakaudit.artifacts import _declare as decl
from vakaudit.artifacts._base import (
    Baseline7,
    Discipline,
    RegistryClass,
    WriteCard,
    WriteGroup,
    ledger_session_id,
)
from vakaudit.artifacts._chain import chain_card, chain_patterns
from vakaudit.artifacts._columns import FileCol, col, count_of, ts_cols, utf8_len
from vakaudit.artifacts._files import file_stem
from vakaudit.artifacts._rowspec import RowSpec

_WRAPPERS = ("event", "sandbox_event")
#: the event of the 500 ms process telemetry rows; in a 7.0 chain appended without a sync of its own,
#: like the activity logs' telemetry rows (**unconfirmed** in vak: baseline7.md §14 items 4 and 6)
TELEMETRY_EVENT = "ProcessTelemetry"


def _unwrap(obj: dict[str, Any]) -> dict[str, Any] | None:
    if "kind" not in obj:
        for key in _WRAPPERS:
            inner = obj.get(key)
            if isinstance(inner, dict) and "kind" in inner:
                merged = {k: v for k, v in obj.items() if k != key}
                merged.update(inner)
                return merged
    return obj


ROWS = RowSpec(
    (
        col("kind", decl.string()),
        *ts_cols(),
        col("execution_id", decl.string()),
        col("tool_use_id", decl.string()),
        col("tool", decl.string()),
        col("language", decl.string()),
        col("scratch_dir", decl.string()),
        col("code_preview_bytes", decl.int64(), utf8_len("code_preview")),
        col("stream", decl.string()),
        col("chunk_bytes", decl.int64(), utf8_len("chunk")),
        col("package_count", decl.int64(), count_of("packages")),
        col("path", decl.string()),
        col("mime_type", decl.string()),
        col("artifact_size_bytes", decl.int64(), "size_bytes"),
        col("elapsed_ms", decl.int64()),
        col("cpu_percent", decl.float64()),
        col("memory_bytes", decl.int64()),
        col("exit_code", decl.int64()),
        col("duration_ms", decl.int64()),
        col("artifact_count", decl.int64(), count_of("artifacts")),
    ),
    prepare=_unwrap,
    fast_when=("kind",),  # _unwrap keeps an object with a top-level kind as it is
    file_cols=(FileCol(decl.field("session_id", decl.string()), lambda ctx: ctx.session_id or file_stem(ctx)),),
)

KIND = ROWS.kind(
    __doc__,
    name="sandbox_executions",
    title="Sandbox execution logs",
    patterns=("**/sandbox/executions/*.jsonl",),
    card=WriteCard(
        writer="append_session_sandbox_event — vak-server",
        trigger="every SandboxEvent: start, each 8 KB stdout/stderr chunk, telemetry every 500 ms, finish",
        discipline="open + append + close per event; no fsync",
        barriers_per_write=0,
        read="whole file per /sandbox/executions request",
        bound="none — a long-running command writes 2 rows/s for its whole life",
        group=WriteGroup.SANDBOX,
        read_class="session",
        time_column="ts_at",
        time_rank=5,
        style=Discipline.APPEND,
        levers=("sidecar_bounds",),  # "Give every append-only sidecar a size bound"
    ),
    v7=Baseline7(
        chain_patterns('**/sandbox/executions/*'),
        (21,),
        vak_class="Record",
        owner='vak-server',
        card=chain_card(
            "RecordChain::append — vak-server",
            'command output of an execution (sealed under the conversation key)',
            'none',
            WriteGroup.SANDBOX,
            relaxed_rows=f"kind = '{TELEMETRY_EVENT}'",
            relaxed_what=f"{TELEMETRY_EVENT} rows",
        ),
    ),
    registry_class=RegistryClass.LEDGER,
    append_only=True,
    priority=30,  # beats the generic sandbox working-tree kind
    session_id_of=ledger_session_id,
    read_cost=2.3,  # short telemetry rows (~5.4 ns/B)
)
