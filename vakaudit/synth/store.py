"""``store.db``: vak-store's schema-v1 SQLite index of the session ledgers (home.md §8.1).

The index is built the way ``Store::import_session`` builds it: read the ledger file back, skip
ids already present, derive ``content_text`` per entry kind and insert into ``entries`` and, for
non-blank text, ``entries_fts``. WAL journal, ``synchronous=NORMAL``. One transaction per session
(vak v1 commits per insert; the resulting rows are the same). On close the WAL is checkpointed and
removed, which keeps the file byte-for-byte reproducible for a given SQLite version.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import orjson

from vakaudit.artifacts.store_db import SCHEMA_V1
from vakaudit.ledger.jsonenc import dumps

__all__ = ["StoreWriter", "SCHEMA_V1"]


_V1_KINDS = frozenset({"header", "message", "compaction", "receipt", "goal", "activity", "work"})


def _plus00(ts: str) -> str:
    return ts[:-1] + "+00:00" if ts.endswith("Z") else ts


def _message_row(obj: dict) -> tuple[str | None, str | None, str | None, str, int]:
    message = obj.get("message") or {}
    role = message.get("role")
    parts: list[str] = []
    tool_name = None
    is_error = 0
    for block in message.get("content") or []:
        kind = block.get("type")
        if kind == "text":
            parts.append(block.get("text", ""))
        elif kind == "thinking":
            parts.append(f"[thinking] {block.get('text', '')}")
        elif kind == "tool_use":
            name = block.get("name", "")
            tool_name = tool_name or name
            command = (
                (block.get("input") or {}).get("command") if isinstance(block.get("input"), dict) else None
            )
            parts.append(f"[tool:{name}] {command}" if isinstance(command, str) else f"[tool:{name}]")
        elif kind == "tool_result":
            parts.append(f"[result] {block.get('content', '')}")
            if block.get("is_error"):
                is_error = 1
    model = (obj.get("meta") or {}).get("model")
    return role, model, tool_name, "\n".join(parts), is_error


class StoreWriter:
    """A v1 store under ``cache_dir``; import ledgers with :meth:`import_session`."""

    def __init__(self, cache_dir: str | os.PathLike[str]) -> None:
        cache_dir = Path(cache_dir).expanduser()
        cache_dir.mkdir(parents=True, exist_ok=True)
        self.path = cache_dir / "store.db"
        self._db = sqlite3.connect(self.path, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA_V1)
        self._db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('version', '1')")
        self.rows = 0

    def import_session(
        self, ledger: str | os.PathLike[str], project_hash: str, *, max_bytes: int | None = None
    ) -> int | None:
        """Index every entry of ``ledger`` not yet in the store; return how many were added.

        With ``max_bytes``, an import that would grow the database past it is rolled back and None
        is returned (the store is left as it was).
        """
        ledger = Path(ledger).expanduser()
        session_id = ledger.stem
        db = self._db
        added = 0
        db.execute("BEGIN")
        with open(ledger, "rb") as fh:
            for raw in fh:
                try:
                    obj = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    continue
                kind = obj.get("kind")
                event = None
                if isinstance(kind, dict):  # a work line: the second `kind` (the event) won
                    event, kind = kind, "work"
                if kind not in _V1_KINDS:
                    continue
                entry_id = obj.get("id")
                if db.execute("SELECT 1 FROM entries WHERE entry_id = ?", (entry_id,)).fetchone():
                    continue
                role = provider = model = tool_name = None
                text = ""
                is_error = 0
                if kind == "message":
                    role, model, tool_name, text, is_error = _message_row(obj)
                elif kind == "header":
                    contract = obj.get("contract") or {}
                    provider, model = contract.get("provider"), contract.get("model")
                elif kind == "receipt":
                    provider, model = obj.get("provider"), obj.get("model")
                elif kind == "compaction":
                    text = obj.get("summary", "")
                elif kind == "goal":
                    text = " ".join([obj.get("objective", ""), *obj.get("criteria", [])])
                elif kind == "activity":
                    role = "system"
                    detail = obj.get("detail")
                    text = f"{obj.get('label', '')} {detail}" if detail else obj.get("label", "")
                    tool_name = (obj.get("data") or {}).get("tool")
                    is_error = 1 if obj.get("status") in ("failed", "denied") else 0
                elif kind == "work":
                    role = "system"
                    text = dumps(event).decode("utf-8")
                ts = _plus00(obj.get("ts", ""))
                db.execute(
                    "INSERT INTO entries(entry_id, session_id, project_hash, parent_id, ts, kind, role, provider,"
                    " model, tool_name, content_text, is_error) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        entry_id,
                        session_id,
                        project_hash,
                        obj.get("parent_id"),
                        ts,
                        kind,
                        role,
                        provider,
                        model,
                        tool_name,
                        text,
                        is_error,
                    ),
                )
                if text.strip():
                    db.execute(
                        "INSERT INTO entries_fts(entry_id, session_id, project_hash, ts, kind, role, content)"
                        " VALUES (?,?,?,?,?,?,?)",
                        (entry_id, session_id, project_hash, ts, kind, role or "", text),
                    )
                added += 1
        if max_bytes is not None:
            # FTS5 keeps its inserts in memory until the transaction ends: a savepoint released here
            # writes them, so the size compared below is the size the commit would leave
            db.execute("SAVEPOINT size_check")
            db.execute("RELEASE size_check")
        if max_bytes is not None and self.size_bytes() > max_bytes:
            db.execute("ROLLBACK")
            return None
        db.execute("COMMIT")
        self.rows += added
        return added

    def size_bytes(self) -> int:
        """Current database size (pages in the file and the WAL), in bytes."""
        (pages,) = self._db.execute("PRAGMA page_count").fetchone()
        (page_size,) = self._db.execute("PRAGMA page_size").fetchone()
        return pages * page_size

    def close(self) -> None:
        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self._db.close()
