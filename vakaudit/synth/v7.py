"""The 7.0 layout of a synthetic home (``vakaudit synth OUT --layout v7``), baseline7.md throughout.

The workload is the G2 layout's, entry for entry: the same seed, profile, ``--turns`` and
``--sessions`` give the same sessions, turns, messages and side rows. It is first written as a G2
home into a private folder beside ``OUT`` (removed afterwards), then laid out the way vak's 7.0
storage keeps it, through vakaudit's storage writers (:mod:`vakaudit.storage.writer`,
:mod:`vakaudit.storage.tenant_writer`; one definition of every frame and object layout):

- each session ledger becomes ``agents/vak/sessions/<spc_…>/<session id>/``: S2 frames (zstd level
  3, AES-256-GCM under the scope key ``conversation:<session id>``, AAD = the frame's offset), the
  7.0 envelope (no ``prev_hash``; activities lose the 2.x ``turn`` field), a
  ``turn_capabilities_bound`` whose interface (``system_prompt``, ``tool_index``, ``tool_schemas``)
  is an object, ``turn_capabilities_ref`` when a turn's binding digest equals the latest binding's,
  before each tool-result message a ``call_effect`` per file read or write and one ``evidence_body``
  (the whole tool result as an object) per result;
  ``fdatasync`` at the commit points of §8.3 only, and the ``req/<session>/<sha256>`` ref after each
  admission activity. A ledger seals its open segment at 256 KiB like a record chain (vak seals
  session ledgers only on an explicit ``seal_segment``, whose caller the spec leaves open: §14 item 3).
- each JSONL side ledger becomes its record chain directory (rows unchanged, one per frame, one sync
  per append, none for telemetry rows: the activity logs' and the execution streams' process
  telemetry, sealed at 256 KiB); sandbox execution streams are sealed under their conversation's key;
- checkpoints become 7.0 manifests (``seq`` from 0) whose file contents are objects of the
  conversation; memory, entities, skill proposals, Office rooms and the presentation library become
  Documents; ``trusted/`` markers are named by space id; ``auth/`` moves to the tenant;
- ``spaces.toml`` binds every workspace to a ``spc_`` id; ``catalog.db`` replaces ``store.db``;
  files 7.0 no longer has (``store.db``, delivery job files, ``feeds/security.log``) are left out.

Key material and nonces, random in vak, are derived from the seed here (SHA-256 of a seeded
counter), so a seed gives the same bytes every run; keys go to the key file, never into the home.
:class:`SynthRecord` is what was written, counted at the writers: bytes per entry kind and per
object role, syncs at vak's sync points.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import sqlite3
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vakaudit.artifacts.sandbox_executions import TELEMETRY_EVENT
from vakaudit.ledger.digest import payload_digest
from vakaudit.ledger.ids import parse_ts
from vakaudit.ledger.jsonenc import dumps
from vakaudit.ledger.keys import workspace_key
from vakaudit.storage.commit import is_commit_point
from vakaudit.storage.documents import document_scope, version_text
from vakaudit.storage.ids import admission_ref, derived_id
from vakaudit.storage.keys import LOCAL_TENANT, scope_file_name
from vakaudit.storage.objects import object_rel_path
from vakaudit.storage.segments import ROTATE_BYTES
from vakaudit.storage.tenant_writer import TenantWriter
from vakaudit.storage.writer import SegmentAppender
from vakaudit.synth.content import WORKSPACES

__all__ = ["SynthRecord", "V7Keys", "SeededBytes", "convert_home", "space_id"]

TENANT = f"tenants/{LOCAL_TENANT}"
AGENT = "agents/vak"
#: JSONL side ledgers of a G2 home (relative paths) that are record chains in 7.0; the activity
#: logs append telemetry rows without a sync of their own (§9.2, **unconfirmed** in vak)
SIDE_CHAINS = (
    "activity-log.jsonl",
    "budget-alerts.jsonl",
    "cost-log.jsonl",
    "gateway/deliveries.jsonl",
    "inbox.jsonl",
    "operations/actions.jsonl",
    "operations/incidents.jsonl",
    "security-events.jsonl",
    f"{AGENT}/activity-log.jsonl",
    f"{AGENT}/commitments.jsonl",
    f"{AGENT}/cost-log.jsonl",
    f"{AGENT}/intent-evidence.jsonl",
    f"{AGENT}/routing-evidence.jsonl",
    f"{AGENT}/sandbox/records.jsonl",
    f"{AGENT}/security-events.jsonl",
)
#: an execution stream's process telemetry row (every 500 ms of a run), appended without a sync of its
#: own (the sandbox executions kind's card says which rows; the synth's rows put ``kind`` first)
_TELEMETRY_ROW = b'{"kind":"' + TELEMETRY_EVENT.encode() + b'"'
#: the tools whose calls record a file effect (``call_effect``, §8.2), by the effect they record
FILE_EFFECTS = {"read": "file_read", "write": "file_write", "edit": "file_write"}
RELAXED_CHAINS = frozenset({"activity-log.jsonl", f"{AGENT}/activity-log.jsonl"})
#: G2 files that are Documents in 7.0 (§7.2), by the first components of their path
DOCUMENT_DIRS = ("memory", "entities", "skill-proposals", "office-workspaces")
#: G2 files 7.0 does not keep: the search store (catalog.db replaces it), delivery job files
#: (settled jobs leave none), the feed security log
DROPPED = ("cache/store.db", "delivery/", "feeds/security.log")


class SeededBytes:
    """Bytes vak draws at random (keys, nonces), derived from a seed: SHA-256 of ``label:n``."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.n = 0

    def __call__(self, size: int) -> bytes:
        out = b""
        while len(out) < size:
            self.n += 1
            out += hashlib.sha256(f"{self.label}:{self.n}".encode()).digest()
        return out[:size]


@dataclass(frozen=True, slots=True)
class V7Keys:
    """The tenant's KEK version 0 and object id key of a synthetic home of ``seed``."""

    kek: bytes
    id_key: bytes

    @classmethod
    def for_seed(cls, seed: int) -> V7Keys:
        rnd = SeededBytes(f"vakaudit-synth-v7-keys:{seed}")
        return cls(rnd(32), rnd(32))

    def __repr__(self) -> str:
        return "V7Keys(<hidden>)"


def space_id(cwd: str) -> str:
    """The ``spc_`` id a synthetic home binds workspace ``cwd`` to (derived, §6.8)."""
    return derived_id("spc", cwd)


@dataclass(slots=True)
class SynthRecord:
    """What the v7 synth wrote, counted at its writers (``synth --record``: docs/schemas/synth.json)."""

    seed: int
    profile: str
    sessions: int = 0
    turns: int = 0
    ledger_entries: int = 0
    # entry kind -> [frames, stored bytes (frames on disk), plaintext bytes (entry JSON)]
    entry_kinds: dict[str, list[int]] = field(default_factory=dict)
    # object role -> [objects written, body bytes on disk, plaintext bytes]
    objects: dict[str, list[int]] = field(default_factory=dict)
    grants: int = 0
    chains: dict[str, list[int]] = field(default_factory=dict)  # rel dir -> [rows, bytes appended]
    syncs: dict[str, int] = field(default_factory=lambda: {"ledger": 0, "chains": 0, "store": 0, "refs": 0})
    sealed_segments: int = 0
    documents: int = 0
    refs: int = 0
    checkpoints: int = 0

    def to_json(self) -> dict[str, Any]:
        turns = max(1, self.turns)
        stored = sum(v[1] for v in self.entry_kinds.values())
        return {
            "layout": "v7",
            "profile": self.profile,
            "seed": self.seed,
            "sessions": self.sessions,
            "turns": self.turns,
            "ledger_entries": self.ledger_entries,
            "ledger_stored_bytes": stored,
            "ledger_stored_bytes_per_turn": round(stored / turns, 1),
            "entry_kinds": {
                k: {"frames": v[0], "stored_bytes": v[1], "plain_bytes": v[2],
                    "stored_bytes_per_turn": round(v[1] / turns, 1)}
                for k, v in sorted(self.entry_kinds.items())
            },
            "objects": {
                k: {"objects": v[0], "stored_bytes": v[1], "plain_bytes": v[2]} for k, v in sorted(self.objects.items())
            },
            "grants": self.grants,
            "record_chains": {k: {"rows": v[0], "bytes": v[1]} for k, v in sorted(self.chains.items())},
            "syncs": dict(self.syncs),
            "syncs_per_turn": {k: round(v / turns, 2) for k, v in self.syncs.items()},
            "ledger_syncs_per_turn": round(self.syncs["ledger"] / turns, 2),
            "sealed_segments": self.sealed_segments,
            "documents": self.documents,
            "refs": self.refs,
            "checkpoints": self.checkpoints,
        }


def binding_digest(entry: dict) -> str:
    """SHA-256 hex of the canonical JSON of a bound entry's payload without ``epoch`` (§8.2)."""
    return payload_digest({k: v for k, v in entry.items() if k not in ("id", "parent_id", "ts", "at_turn", "kind", "epoch")})


def _derived_entry_id(of: str, n: int, seed: int) -> str:
    """A UUIDv7-shaped id for an entry the 7.0 layout adds next to entry ``of`` (same timestamp)."""
    h = hashlib.sha256(f"{seed}:{of}:{n}".encode()).digest()
    try:
        ts = uuid.UUID(of).bytes[:6]
    except ValueError:
        ts = bytes(6)
    b = bytearray(ts + h[:10])
    b[6] = 0x70 | (b[6] & 0x0F)
    b[8] = 0x80 | (b[8] & 0x3F)
    return str(uuid.UUID(bytes=bytes(b)))


def _result_text(block: dict) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(c.get("text", "") for c in content if isinstance(c, dict))
    return ""


class _Converter:
    def __init__(self, src: Path, out: Path, keys: V7Keys, record: SynthRecord, *, seed: int, fsync: bool) -> None:
        self.src, self.out, self.seed, self.fsync = src, out, seed, fsync
        self.record = record
        self.nonces = SeededBytes(f"vakaudit-synth-v7-nonces:{seed}")
        self.tw = TenantWriter(out / TENANT, keks={0: keys.kek}, id_key=keys.id_key,
                               random=SeededBytes(f"vakaudit-synth-v7-random:{seed}"), compress="zstd",
                               keep_open=True, refs_synchronous="FULL" if fsync else "OFF")
        self.scope_keys: dict[str, bytes] = {}
        self.spaces = {workspace_key(c): space_id(c) for c in WORKSPACES}
        self.space_cwd = {space_id(c): c for c in WORKSPACES}
        self.last_opened: dict[str, int] = {}
        self.used_spaces: set[str] = set()
        self.catalog_rows: list[tuple] = []  # (session, entry_id, segment, frame, parent, depth)
        self.catalog_nodes: list[tuple] = []
        self.catalog_cursors: list[tuple] = []

    # -- helpers ----------------------------------------------------------------------------------
    def _nonce(self) -> bytes:
        return self.nonces(12)

    def scope_key(self, scope: str) -> bytes:
        key = self.scope_keys.get(scope)
        if key is None:
            key = self.scope_keys[scope] = self.tw.scope_key(scope)
            self.record.syncs["store"] += 2  # key file: staged + synced, renamed, directory synced
        return key

    def _body(self, oid: str) -> Path:
        return self.tw.store_dir / object_rel_path(oid)

    def _grant(self, oid: str, scope: str) -> Path:
        return self.tw.store_dir / "cas" / "grants" / oid / scope_file_name(scope)

    def _count(self, oid: str, plain_len: int, role: str, new: bool, new_grant: bool = True) -> None:
        """Count one put: a new grant and a new body are each staged, synced, renamed and their
        directory synced (§4.5); a grant already there is touched; ``_store/commit`` is bumped."""
        self.record.grants += new_grant
        self.record.syncs["store"] += (2 if new_grant else 0) + (2 if new else 0)
        self.record.syncs["refs"] += 1
        if new:
            stat = self.record.objects.setdefault(role, [0, 0, 0])
            stat[0] += 1
            stat[1] += self._body(oid).stat().st_size
            stat[2] += plain_len

    def put(self, plaintext: bytes, scope: str, role: str) -> dict:
        oid = self.tw.object_id(plaintext)
        new = not self._body(oid).exists()
        new_grant = new or not self._grant(oid, scope).is_file()
        self.tw.put(plaintext, scope)
        self._count(oid, len(plaintext), role, new, new_grant)
        return {"id": oid, "len": len(plaintext)}

    def set_ref(self, name: str, target: bytes) -> None:
        self.tw.set_ref(name, target)
        self.record.refs += 1
        self.record.syncs["refs"] += 2  # the ref's CAS and _store/commit (WAL, synchronous=FULL)

    def space_of(self, key: str) -> str:
        spc = self.spaces.get(key, key)
        if spc in self.space_cwd:
            self.used_spaces.add(spc)
        return spc

    # -- the home ---------------------------------------------------------------------------------
    def run(self) -> None:
        src = self.src
        files = sorted(p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file())
        for rel in files:
            if rel.startswith(f"{AGENT}/sessions/") and rel.endswith(".jsonl"):
                self.ledger(rel)
        for rel in files:
            if rel.startswith(f"{AGENT}/sessions/"):
                continue
            if rel in SIDE_CHAINS:
                self.chain(rel)
            elif rel.startswith(f"{AGENT}/sandbox/executions/") and rel.endswith(".jsonl"):
                self.chain(rel, session=rel.rsplit("/", 1)[1][: -len(".jsonl")])
            elif rel.startswith(f"{AGENT}/checkpoints/"):
                self.checkpoint(rel)
            elif rel.split("/")[2:3] and rel.startswith(AGENT + "/") and rel.split("/")[2] in DOCUMENT_DIRS:
                self.document(rel)
            elif rel == f"{AGENT}/presentations.json":
                self.document(rel)
            elif any(rel == d or (d.endswith("/") and rel.startswith(d)) for d in DROPPED):
                continue
            elif rel.startswith("trusted/"):
                self.copy(rel, "trusted/" + self.space_of(rel.split("/", 1)[1]))
            elif rel.startswith("auth/"):
                self.copy(rel, f"{TENANT}/{rel}")
            else:
                self.copy(rel, rel)
        self.tw.close()
        self.spaces_toml()
        self.catalog()

    def copy(self, rel: str, to: str) -> None:
        dst = self.out / to
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(self.src / rel, dst)

    # -- session ledgers --------------------------------------------------------------------------
    def ledger(self, rel: str) -> None:
        key_dir, name = rel.split("/")[-2:]
        sid = name[: -len(".jsonl")]
        space = self.space_of(key_dir)
        rel_dir = f"{AGENT}/sessions/{space}/{sid}"
        scope = f"conversation:{sid}"
        app = SegmentAppender(self.out / rel_dir, key=self.scope_key(scope), scope=scope, compress="zstd",
                              nonces=self._nonce, rotate_bytes=ROTATE_BYTES, fsync=self.fsync)
        rec = self.record
        rec.sessions += 1
        # per entry id, the latest binding (entry id, digest) on the chain up to it: a turn writes a
        # ref when its digest equals the latest binding on the ACTIVE chain (§8.2), not in file order
        bound_at: dict[str, tuple[str, str] | None] = {}
        calls: dict[str, tuple[str, dict]] = {}  # tool_use_id -> (tool, input) of this session's calls
        depth: dict[str, int] = {}
        n_entries = 0
        created = ""
        with open(self.src / rel, "rb") as fh:
            for line in fh:
                entry = json.loads(line)
                entry.pop("prev_hash", None)
                kind = entry.get("kind")
                raw: bytes | None = None
                if not isinstance(kind, str):
                    # a work entry: two "kind" keys (the envelope's, then the event's, §8.1), which a
                    # JSON object cannot hold; its line is kept as written, without prev_hash
                    raw = _PREV_HASH.sub(b"", line.rstrip(b"\r\n"), count=1)
                    kind = "work"
                if kind == "header":
                    created = entry.get("ts", "")
                elif kind == "activity":
                    entry.pop("turn", None)
                out: list[dict] = []
                bound = None
                if kind == "turn_capabilities_bound":
                    entry, bound = self._binding(entry, scope, bound_at.get(entry.get("parent_id")))
                elif kind == "message" and (entry.get("message") or {}).get("role") == "user":
                    out += self._evidence(entry, scope, calls)
                elif kind == "message":
                    for b in (entry.get("message") or {}).get("content") or ():
                        if isinstance(b, dict) and b.get("type") == "tool_use":
                            calls[b.get("id", "")] = (b.get("name", ""), b.get("input") or {})
                out.append(entry)
                for e in out:
                    bound_at[e["id"]] = bound if bound is not None and e is entry else bound_at.get(e.get("parent_id"))
                    segment, frame_index = app.position
                    text = raw if raw is not None else dumps(e)
                    frame = app.append(text, sync=is_commit_point(e))
                    ek = "work" if raw is not None and e is entry else e["kind"]
                    stat = rec.entry_kinds.setdefault(ek, [0, 0, 0])
                    stat[0] += 1
                    stat[1] += len(frame)
                    stat[2] += len(text)
                    parent = e.get("parent_id")
                    depth[e["id"]] = depth.get(parent, -1) + 1 if parent is not None else 0
                    self.catalog_rows.append((sid, e["id"], segment, frame_index, parent, depth[e["id"]]))
                    n_entries += 1
                    if ek == "activity" and "request_id" in (e.get("data") or {}):
                        self.set_ref(admission_ref(sid, e["data"]["request_id"]), e["id"].encode("ascii"))
        app.close()
        rec.syncs["ledger"] += app.syncs
        rec.sealed_segments += app.sealed_segments
        rec.ledger_entries += n_entries
        if created:
            self.last_opened[space] = max(self.last_opened.get(space, 0), parse_ts(created) // 1_000_000_000)
        self.catalog_nodes.append((f"ses_{sid}", "session", space, "vak", sid, created, n_entries, rel_dir))
        self.catalog_cursors.append((f"session:{rel_dir}", *app.position))

    def _binding(self, entry: dict, scope: str, last: tuple[str, str] | None) -> tuple[dict, tuple[str, str]]:
        interface = {k: entry[k] for k in ("system_prompt", "tool_index", "tool_schemas") if k in entry}
        head = {k: entry[k] for k in ("id", "parent_id", "ts", "at_turn") if k in entry}
        bound = {
            **head,
            "kind": "turn_capabilities_bound",
            "epoch": entry.get("epoch"),
            "capability_ids": entry.get("capability_ids", []),
            "excluded_ids": entry.get("excluded_ids", []),
            "core_tool_names": entry.get("core_tool_names", []),
            "deferred_tool_names": entry.get("deferred_tool_names", []),
            "tool_domains": entry.get("tool_domains", {}),
        }
        text = json.dumps(interface, separators=(",", ":"), ensure_ascii=False, sort_keys=True).encode("utf-8")
        oid = self.tw.object_id(text)
        digest = binding_digest({**bound, "interface": {"id": oid, "len": len(text)}})
        if last is not None and last[1] == digest:
            return {**head, "kind": "turn_capabilities_ref", "entry": last[0], "digest": digest,
                    "epoch": entry.get("epoch")}, last
        bound["interface"] = self.put(text, scope, "interface")
        return bound, (entry["id"], digest)

    def _evidence(self, entry: dict, scope: str, calls: dict[str, tuple[str, dict]]) -> list[dict]:
        """Per tool result of a tool-result message, chained before it: the call's ``call_effect``
        when it read or wrote a file (§8.2 ``file_read`` / ``file_write``), then its
        ``evidence_body`` (the whole result as an object of the conversation)."""
        content = (entry.get("message") or {}).get("content")
        if not isinstance(content, list):
            return []
        out: list[dict] = []
        parent = entry.get("parent_id")

        def add(n: int, payload: dict) -> None:
            nonlocal parent
            e = {"id": _derived_entry_id(entry["id"], n, self.seed), "parent_id": parent, "ts": entry["ts"]}
            if "at_turn" in entry:
                e["at_turn"] = entry["at_turn"]
            e.update(payload)
            out.append(e)
            parent = e["id"]

        for i, block in enumerate(content):
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            tool_use_id = block.get("tool_use_id", "")
            text = _result_text(block).encode("utf-8")
            name, inp = calls.get(tool_use_id, ("", {}))
            effect = FILE_EFFECTS.get(name)
            if effect is not None and isinstance(inp.get("path"), str) and not block.get("is_error"):
                data = text if effect == "file_read" else str(inp.get("content", "")).encode("utf-8")
                add(2 * i + 1, {"kind": "call_effect", "tool_use_id": tool_use_id,
                                "effect": {"kind": effect, "path": inp["path"],
                                           "digest": hashlib.sha256(data).hexdigest(), "bytes": len(data)}})
            add(2 * i, {"kind": "evidence_body", "tool_use_id": tool_use_id,
                        "body": self.put(text, scope, "evidence")})
        if out:
            entry["parent_id"] = parent
        return out

    # -- record chains ----------------------------------------------------------------------------
    def chain(self, rel: str, session: str | None = None) -> None:
        rel_dir = rel[: -len(".jsonl")]
        scope = f"conversation:{session}" if session else None
        app = SegmentAppender(self.out / rel_dir, key=self.scope_key(scope) if scope else None, scope=scope,
                              compress="zstd", nonces=self._nonce, rotate_bytes=ROTATE_BYTES, fsync=self.fsync)
        relaxed = rel in RELAXED_CHAINS
        stat = self.record.chains.setdefault(rel_dir, [0, 0])
        with open(self.src / rel, "rb") as fh:
            for line in fh:
                row = line.rstrip(b"\n")
                if not row:
                    continue
                telemetry = relaxed or row.startswith(_TELEMETRY_ROW)
                frame = app.append(row, sync=not telemetry)
                stat[0] += 1
                stat[1] += len(frame)
        app.close()
        self.record.syncs["chains"] += app.syncs
        self.record.sealed_segments += app.sealed_segments

    # -- checkpoints, documents -------------------------------------------------------------------
    def checkpoint(self, rel: str) -> None:
        doc = json.loads((self.src / rel).read_bytes())
        sid = doc["session_id"]
        scope = f"conversation:{sid}"
        self.scope_key(scope)
        created_ns = parse_ts(doc["created_at"])
        files = []
        for f in doc.get("files", []):
            data = base64.b64decode(f.get("content", ""))
            ref = self.put(data, scope, "checkpoint")
            files.append({"rel_path": f["rel_path"], "hash": ref["id"], "size": len(data), "mtime_ns": created_ns})
        seq = max(0, int(doc["seq"]) - 1)
        manifest = {"seq": seq, "session_id": sid, "created_at": doc["created_at"], "label": doc.get("label", ""),
                    "files": files, "observed": doc.get("observed", [])}
        dst = self.out / AGENT / "checkpoints" / sid / f"{seq:04d}.json"
        dst.parent.mkdir(parents=True, exist_ok=True)
        tmp = dst.with_name(f".{seq:04d}.tmp")
        tmp.write_bytes(dumps(manifest))
        os.replace(tmp, dst)
        self.record.checkpoints += 1

    def document(self, rel: str) -> None:
        parts = rel.split("/")
        if len(parts) > 3 and parts[2] in DOCUMENT_DIRS:
            parts[3] = self.space_of(parts[3])
        name = "/".join(parts)
        content = (self.src / rel).read_bytes()
        scope = document_scope(name)
        cid = self.tw.object_id(content)
        new = not self._body(cid).exists()
        vid = self.tw.save_document(name, content, scope)  # content object, version object, doc/ ref
        self._count(cid, len(content), "document", new)
        self._count(vid, len(version_text(None, cid, 1)), "document_version", True)
        self.record.refs += 1
        self.record.syncs["refs"] += 2
        self.record.documents += 1

    # -- tenant files -----------------------------------------------------------------------------
    def spaces_toml(self) -> None:
        lines = []
        for spc in sorted(self.used_spaces):
            cwd = self.space_cwd[spc]
            name = cwd.rstrip("/").rsplit("/", 1)[-1]
            text = f'[spaces."{spc}"]\nbindings = [{json.dumps(cwd)}]\nname = {json.dumps(name)}\n'
            if spc in self.last_opened:
                text += f"last_opened = {self.last_opened[spc]}\n"
            lines.append(text)
        path = self.out / TENANT / "spaces.toml"
        path.write_text("\n".join(lines), encoding="utf-8")

    def catalog(self) -> None:
        """``catalog.db`` (§10): schema 2, its tables; rows for the session nodes, their entries and
        the session cursors. The text index (``texts``, FTS5) and the other node kinds are left empty:
        the catalog is derived and rebuildable, and what vakaudit reads of it is its size."""
        path = self.out / TENANT / "catalog" / "catalog.db"
        path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(path)
        try:
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
            with con:
                con.executescript(_CATALOG_SCHEMA)
                con.execute("INSERT INTO meta VALUES ('schema', '2')")
                con.executemany("INSERT INTO cursors VALUES (?, ?, ?)", self.catalog_cursors)
                con.executemany(
                    "INSERT INTO nodes (id, kind, space, agent, session, created_at, updated_at, size, locator)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(n[0], n[1], n[2], n[3], n[4], n[5], n[5], n[6], n[7]) for n in self.catalog_nodes],
                )
                con.executemany("INSERT OR IGNORE INTO entries VALUES (?, ?, ?, ?, ?, ?, 0)", self.catalog_rows)
        finally:
            con.close()


_PREV_HASH = re.compile(rb',"prev_hash":(?:null|"[^"]*")')
_CATALOG_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE cursors (source TEXT PRIMARY KEY, segment INTEGER NOT NULL, frames INTEGER NOT NULL);
CREATE TABLE nodes (id TEXT PRIMARY KEY, kind TEXT NOT NULL, space TEXT, agent TEXT, agent_name TEXT,
  session TEXT, turn TEXT, run TEXT, actor TEXT, cause TEXT, audience TEXT, title TEXT, status TEXT,
  created_at TEXT, updated_at TEXT, size INTEGER, locator TEXT);
CREATE INDEX nodes_kind ON nodes (kind, created_at);
CREATE INDEX nodes_session ON nodes (session);
CREATE TABLE edges (src TEXT NOT NULL, kind TEXT NOT NULL, dst TEXT NOT NULL, PRIMARY KEY (src, kind, dst));
CREATE INDEX edges_dst ON edges (dst, kind);
CREATE TABLE grants (grant_id TEXT PRIMARY KEY, node TEXT NOT NULL, principal TEXT NOT NULL, role TEXT NOT NULL,
  expires TEXT, revoked INTEGER NOT NULL DEFAULT 0);
CREATE INDEX grants_principal ON grants (principal, node);
CREATE TABLE broken (node TEXT PRIMARY KEY);
CREATE TABLE calls (node TEXT PRIMARY KEY, tool TEXT NOT NULL, input TEXT NOT NULL);
CREATE TABLE texts (id INTEGER PRIMARY KEY, node TEXT NOT NULL UNIQUE, body TEXT NOT NULL);
CREATE TABLE entries (session TEXT, entry_id TEXT, segment INTEGER, frame INTEGER, parent TEXT, depth INTEGER,
  reset INTEGER, PRIMARY KEY (session, entry_id));
CREATE TABLE jumps (session TEXT, entry_id TEXT, level INTEGER, ancestor TEXT, PRIMARY KEY (session, entry_id, level));
CREATE TABLE turn_records (session TEXT, entry_id TEXT, turn_id TEXT, record TEXT, recorded_at TEXT,
  PRIMARY KEY (session, entry_id));
CREATE INDEX turn_records_turn ON turn_records (session, turn_id);
"""


def convert_home(src: Path, out: Path, keys: V7Keys, record: SynthRecord, *, seed: int, fsync: bool) -> SynthRecord:
    """Lay the G2 home ``src`` out in the 7.0 layout in the empty folder ``out``."""
    _Converter(src, out, keys, record, seed=seed, fsync=fsync).run()
    return record


def staging_dir(out: Path) -> Path:
    """A private folder beside ``out`` (never inside it) for the G2 form of the workload."""
    out.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{out.name}.g2-", dir=out.parent))


def build_v7(out: Path, build_g2, *, profile: str, seed: int, fsync: bool):
    """Write the workload as G2 into a staging folder beside ``out`` with ``build_g2(folder)``, then
    lay it out in 7.0 form in ``out``; returns ``(g2 result, keys, record)``. The staging folder is
    removed, also on failure."""
    staging = staging_dir(out)
    try:
        result = build_g2(staging / "g2")
        keys = V7Keys.for_seed(seed)
        record = SynthRecord(seed=seed, profile=profile, turns=result.turns)
        convert_home(staging / "g2", out, keys, record, seed=seed, fsync=fsync)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return result, keys, record
