"""A 7.0 session ledger (a conversation directory of frames, baseline7.md §3, §8) opened for replay.

The plaintext entries of the frames (``storage`` gives them, with the conversation key) are handed,
one per line, to :meth:`vakaudit.ledger.SessionLog.read_only_from`, so a 7.0 ledger is replayed by
the same parse, turn index and projection as a JSONL ledger. What 7.0 moved out of the ledger is
read back from the tenant store here (§8.6): the interface object behind each
``turn_capabilities_bound`` (its ``system_prompt``, ``tool_schemas``, ``tool_index``) and the body
of each ``evidence_body``. Reads only.
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vakaudit.errors import ObjectUnavailableError
from vakaudit.ledger import SessionLog
from vakaudit.scan.paths import conversation_dirs  # where a 7.0 home keeps its conversations
from vakaudit.storage import KeyRing, Store, TenantKeys, iter_segments

__all__ = ["V7Ledger", "conversation_dirs", "open_v7_ledger", "INTERFACE_FIELDS"]

#: the fields of a 7.0 binding's interface object (baseline7.md §8.2)
INTERFACE_FIELDS = ("system_prompt", "tool_schemas", "tool_index")


@dataclass(slots=True)
class V7Ledger:
    """One conversation directory read for replay.

    ``log`` holds the readable entries (None when no frame could be read: sealed and no key);
    ``frames`` and ``readable`` count the frames and those whose entry was read; ``interfaces``
    maps each binding entry id to its interface fields or why the object could not be read;
    ``evidence`` lists ``(entry id, tool_use_id, problem or None)`` per ``evidence_body``;
    ``problems`` are the segment reader's findings (one line each)."""

    rel_dir: str
    log: SessionLog | None
    frames: int = 0
    readable: int = 0
    interfaces: dict[str, dict[str, Any] | str] = field(default_factory=dict)
    evidence: list[tuple[str, str, str | None]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def locked(self) -> bool:
        """Frames are there but none could be read (sealed frames, no key)."""
        return self.frames > 0 and self.readable == 0


def _tenants(root: Path, keys: KeyRing | None) -> list[tuple[Path, TenantKeys, Store]]:
    from vakaudit.scan.store7 import tenant_dirs

    out = []
    for t in tenant_dirs(root):
        out.append((t, TenantKeys(t / "keys", keys, rel_dir=f"{t.relative_to(root).as_posix()}/keys"),
                    Store(t / "store", keys, rel_dir=f"{t.relative_to(root).as_posix()}/store")))
    return out


def open_v7_ledger(root: str | os.PathLike, directory: str | os.PathLike, keys: KeyRing | None,
                   tenants: list | None = None) -> V7Ledger:
    """Read the conversation directory ``directory`` of the 7.0 home ``root`` for replay."""
    from vakaudit.scan.store7 import chain_key

    root = Path(root).expanduser()
    d = Path(directory).expanduser()
    rel_dir = d.relative_to(root).as_posix()
    tenants = tenants if tenants is not None else _tenants(root, keys)
    key = chain_key(d, rel_dir, [(t, tk) for t, tk, _s in tenants]) if keys is not None else None
    walk = iter_segments(d, key, rel_dir=rel_dir)
    entries: list[bytes] = []
    frames = 0
    for _segment, seg_frames in walk:
        for f in seg_frames:
            frames += 1
            if f.entry is not None:
                entries.append(f.entry)
    out = V7Ledger(rel_dir, None, frames=frames, readable=len(entries),
                   problems=[f"{f.rel_path}: {f.message}" for f in walk.findings])
    if not entries:
        return out
    # one entry a line: an entry holding a raw line feed is not compact JSON and does not parse
    data = b"".join(e.replace(b"\n", b" ") + b"\n" for e in entries)
    out.log = SessionLog.read_only_from(d, io.BytesIO(data), strict_utf8=False)
    header = out.log.header
    sid = header.payload.get("session_id") if header is not None else None
    scope = f"conversation:{sid if isinstance(sid, str) else d.name}"
    stores = [s for _t, _tk, s in tenants]
    for e in out.log.entries:
        if e.kind == "turn_capabilities_bound" and "interface" in e.payload:
            out.interfaces[e.id] = _interface(stores, e.payload.get("interface"), scope)
        elif e.kind == "evidence_body":
            body = _object(stores, e.payload.get("body"), scope)
            tool = e.payload.get("tool_use_id")
            out.evidence.append((e.id, tool if isinstance(tool, str) else "",
                                 body if isinstance(body, str) else None))
    return out


def _object(stores: list[Store], ref: Any, scope: str) -> bytes | str:
    """The plaintext of the ObjectRef ``ref`` ({id, len}) through ``scope``, or why it is unavailable."""
    if not isinstance(ref, dict) or not isinstance(ref.get("id"), str):
        return f"its object reference {ref!r} is not an ObjectRef"
    oid = ref["id"]
    if not stores:
        return f"object {oid}: the home has no tenant store"
    why = ""
    for store in stores:
        try:
            plain = store.object(oid, scope)
        except ObjectUnavailableError as exc:
            why = f"{exc} ({exc.reason})"
            continue
        if isinstance(ref.get("len"), int) and ref["len"] != len(plain):
            return f"object {oid} holds {len(plain)} bytes, its reference says {ref['len']}"
        return plain
    return why


def _interface(stores: list[Store], ref: Any, scope: str) -> dict[str, Any] | str:
    got = _object(stores, ref, scope)
    if isinstance(got, str):
        return f"interface object: {got}"
    try:
        doc = json.loads(got)
    except ValueError:
        return "interface object: not JSON"
    if not isinstance(doc, dict):
        return "interface object: not a JSON object"
    return {k: doc[k] for k in INTERFACE_FIELDS if k in doc}
