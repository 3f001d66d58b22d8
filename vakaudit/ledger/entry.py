"""One ledger line: the entry envelope and its flattened payload (spec ledger.md §2, §4).

A line is one compact JSON object: ``id``, ``parent_id`` (always written, ``null`` for a root),
``ts``, ``prev_hash`` (omitted when absent), ``at_turn`` (G4, omitted when absent), ``kind``, then the
payload fields flattened into the same object. :class:`Entry` keeps the envelope as attributes and
everything else, in file order, as ``payload``.

Work lines carry two ``kind`` keys (§2.4): the first is the envelope tag (``"work"``), the second the
work event object. The first is :attr:`Entry.kind`, the second ``payload["kind"]``; writing the entry
back emits both, as vak does.

Reading is deliberately more lenient than vak's: unknown kinds and unknown keys are kept (vak ignores
unknown keys and skips unknown kinds), payload fields are not checked against the kind's schema
(vak skips a line whose payload does not deserialize, e.g. a shape-A compaction under G3), and work
lines parse (vak's own reader skips them). What is checked is what every entry needs: a JSON object
with string ``id``, RFC 3339 ``ts`` and string ``kind``, ``parent_id``/``prev_hash``/``at_turn``
strings or null.

No I/O here.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from vakaudit.ledger.jsonenc import dumps
from vakaudit.ledger.vocab import KNOWN_KINDS, EntryKind  # re-exported: the kinds are vocabulary

__all__ = [
    "Entry",
    "EntryKind",
    "EntryParseError",
    "KNOWN_KINDS",
    "ENVELOPE_KEYS",
    "parse_envelope",
]


class EntryParseError(ValueError):
    """A line is not a valid ledger entry (bad JSON, not an object, or a bad envelope field)."""


#: Envelope keys other than ``kind``, in serialization order.
ENVELOPE_KEYS = ("id", "parent_id", "ts", "prev_hash", "at_turn")

# The envelope exactly as vak serializes it (§2.2): id, parent_id, ts, prev_hash?, at_turn?, kind,
# printable ASCII strings without escapes, a UTC timestamp with up to nine fraction digits. Matched on
# a line's first bytes decoded as Latin-1, groups (id, parent_id, ts, prev_hash, at_turn, kind); a line that
# does not match is read by a full decode (:func:`parse_envelope`). The compiled kernel
# (vakaudit/_native/ledger_lines.c, parse_envelope) accepts the same layout.
_S = r"[\x20\x21\x23-\x5b\x5d-\x7e]*"  # printable ASCII without quote and backslash
_TS = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z"
WRITTEN_ENVELOPE = re.compile(
    rf'\{{"id":"({_S})","parent_id":(?:null|"({_S})"),"ts":"({_TS})"'
    rf'(?:,"prev_hash":"({_S})")?(?:,"at_turn":"({_S})")?,"kind":"({_S})"[,}}]'
)

# Any RFC 3339 date-time with Z or an offset (chrono is the writer; readers accept offsets).
_TS_RE = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})")

_ts_match = _TS_RE.fullmatch
_orjson_loads = orjson.loads
_JSONDecodeError = orjson.JSONDecodeError

_ACTIVITY_ALIASES = {"subagent": "worker"}


def _check_envelope(ident: Any, parent: Any, ts: Any, prev: Any, at_turn: Any, kind: Any) -> None:
    if not isinstance(ident, str):
        raise EntryParseError("entry has no string 'id'")
    if not isinstance(kind, str):
        raise EntryParseError("entry has no string 'kind'")
    if not isinstance(ts, str) or _TS_RE.fullmatch(ts) is None:
        raise EntryParseError("entry 'ts' is not an RFC 3339 timestamp")
    if parent is not None and not isinstance(parent, str):
        raise EntryParseError("entry 'parent_id' is neither a string nor null")
    if prev is not None and not isinstance(prev, str):
        raise EntryParseError("entry 'prev_hash' is neither a string nor null")
    if at_turn is not None and not isinstance(at_turn, str):
        raise EntryParseError("entry 'at_turn' is neither a string nor null")


def _pairs_parse(raw: bytes) -> tuple[tuple, dict]:
    """Duplicate-aware parse: the first ``kind`` is the tag, a second one goes to the payload."""
    top: list = []

    def hook(pairs: list) -> dict:
        top[:] = [pairs]
        return dict(pairs)

    try:
        json.loads(raw, object_pairs_hook=hook)
    except ValueError as exc:  # pragma: no cover - orjson accepted the line already
        raise EntryParseError(str(exc)) from exc
    pairs = top[0]
    env: dict[str, Any] = {}
    kind: Any = None
    have_kind = False
    payload: dict[str, Any] = {}
    for key, value in pairs:
        if key == "kind" and not have_kind:
            kind, have_kind = value, True
        elif key in ENVELOPE_KEYS and key not in env:
            env[key] = value
        else:
            payload[key] = value
    return (
        env.get("id"),
        env.get("parent_id"),
        env.get("ts"),
        env.get("prev_hash"),
        env.get("at_turn"),
        kind,
    ), payload


def parse_envelope(raw: bytes) -> tuple[tuple, dict]:
    """Parse ``raw`` (validating it fully) and return ``(envelope, payload)``.

    ``envelope`` = ``(id, parent_id, ts, prev_hash, at_turn, kind)``. ``payload`` is the decoded payload
    dict. Raises :class:`EntryParseError`. This is the per-line hot path of every open.
    """
    try:
        d = _orjson_loads(raw)
    except _JSONDecodeError as exc:
        raise EntryParseError(f"not valid JSON: {exc}") from exc
    if type(d) is not dict:
        raise EntryParseError("line is not a JSON object")
    kind = d.get("kind")
    if type(kind) is not str or kind == "work" or b'"kind":"work"' in raw:
        # orjson keeps the last of two duplicate keys (a work line's event, whatever its type): re-read
        # the pairs in order, the first kind is the tag
        env, payload = _pairs_parse(raw)
        _check_envelope(*env)
        return env, payload
    pop = d.pop
    env = (
        pop("id", None),
        pop("parent_id", None),
        pop("ts", None),
        pop("prev_hash", None),
        pop("at_turn", None),
    )
    del d["kind"]
    ident, parent, ts, prev, at_turn = env
    if (
        type(ident) is not str
        or type(ts) is not str
        or (parent is not None and type(parent) is not str)
        or (prev is not None and type(prev) is not str)
        or (at_turn is not None and type(at_turn) is not str)
        or _ts_match(ts) is None
    ):
        _check_envelope(ident, parent, ts, prev, at_turn, kind)  # raises with the precise reason
    return (ident, parent, ts, prev, at_turn, kind), d


class Entry:
    """One ledger entry. ``payload`` is everything after the envelope, in file order (read-only)."""

    __slots__ = ("id", "parent_id", "ts", "prev_hash", "at_turn", "kind", "raw", "_payload")

    def __init__(
        self,
        id: str,
        parent_id: str | None,
        ts: str,
        kind: str,
        payload: dict[str, Any] | None = None,
        *,
        prev_hash: str | None = None,
        at_turn: str | None = None,
        raw: bytes | None = None,
    ) -> None:
        self.id = id
        self.parent_id = parent_id
        self.ts = ts
        self.prev_hash = prev_hash
        self.at_turn = at_turn
        self.kind = kind
        self.raw = raw
        self._payload = payload if payload is not None else ({} if raw is None else None)

    # -- reading ---------------------------------------------------------------------------------

    @classmethod
    def from_line(cls, raw: bytes) -> Entry:
        """Parse one line (without its LF; one trailing CR is dropped like vak's reader does)."""
        if raw.endswith(b"\n"):
            raw = raw[:-1]
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        env, payload = parse_envelope(raw)
        ident, parent, ts, prev, at_turn, kind = env
        return cls(ident, parent, ts, kind, payload, prev_hash=prev, at_turn=at_turn, raw=bytes(raw))

    @classmethod
    def lazy(
        cls,
        raw: bytes,
        envelope: tuple,
    ) -> Entry:
        """An entry whose payload is decoded from ``raw`` only when first read.

        ``envelope`` must come from :func:`parse_envelope` of the same bytes.
        """
        ident, parent, ts, prev, at_turn, kind = envelope
        e = cls(ident, parent, ts, kind, None, prev_hash=prev, at_turn=at_turn, raw=raw)
        e._payload = None
        return e

    @property
    def payload(self) -> dict[str, Any]:
        p = self._payload
        if p is None:
            _, p = parse_envelope(self.raw)  # type: ignore[arg-type]
            self._payload = p
        return p

    @property
    def payload_loaded(self) -> bool:
        """Whether the payload has been decoded (lazy entries decode on first access)."""
        return self._payload is not None

    def release_payload(self) -> None:
        """Drop a decoded payload of an entry read from bytes (it is decoded again on demand)."""
        if self.raw is not None:
            self._payload = None

    # -- writing ---------------------------------------------------------------------------------

    def to_line(self) -> bytes:
        """serde_json-compatible serialization of this entry, without the LF.

        Always re-serializes from the envelope and payload (never returns ``raw``).
        """
        out = [b'{"id":', orjson.dumps(self.id), b',"parent_id":', orjson.dumps(self.parent_id)]
        out += [b',"ts":', orjson.dumps(self.ts)]
        if self.prev_hash is not None:
            out += [b',"prev_hash":', orjson.dumps(self.prev_hash)]
        if self.at_turn is not None:
            out += [b',"at_turn":', orjson.dumps(self.at_turn)]
        out += [b',"kind":', orjson.dumps(self.kind)]
        payload = self.payload
        if payload:
            out += [b",", dumps(payload)[1:-1]]
        out.append(b"}")
        return b"".join(out)

    def replace(self, **changes: Any) -> Entry:
        """A new, unserialized entry with some envelope fields (or ``payload``) changed."""
        fields = {
            "id": self.id,
            "parent_id": self.parent_id,
            "ts": self.ts,
            "kind": self.kind,
            "payload": self.payload,
            "prev_hash": self.prev_hash,
            "at_turn": self.at_turn,
        }
        fields.update(changes)
        return Entry(
            fields["id"],
            fields["parent_id"],
            fields["ts"],
            fields["kind"],
            fields["payload"],
            prev_hash=fields["prev_hash"],
            at_turn=fields["at_turn"],
        )

    # -- convenience views -----------------------------------------------------------------------

    @property
    def is_known_kind(self) -> bool:
        return self.kind in KNOWN_KINDS

    @property
    def message(self) -> dict | None:
        """The neutral message of a ``message`` entry, else None."""
        if self.kind != "message":
            return None
        m = self.payload.get("message")
        return m if isinstance(m, dict) else None

    @property
    def role(self) -> str | None:
        m = self.message
        return m.get("role") if m is not None else None

    @property
    def meta(self) -> dict:
        if self.kind != "message":
            return {}
        m = self.payload.get("meta")
        return m if isinstance(m, dict) else {}

    @property
    def control(self) -> str | None:
        """The runtime control tag of a message (``meta.control``), else None."""
        c = self.meta.get("control")
        return c if isinstance(c, str) else None

    @property
    def is_control(self) -> bool:
        """Only user-role messages are ever control (§5.3)."""
        return self.control is not None and self.role == "user"

    @property
    def usage(self) -> dict | None:
        u = self.meta.get("usage")
        return u if isinstance(u, dict) else None

    @property
    def activity_kind(self) -> str | None:
        """``activity_kind`` of an activity with the pre-3.2.5 alias ``subagent`` read as ``worker``."""
        if self.kind != "activity":
            return None
        k = self.payload.get("activity_kind")
        return _ACTIVITY_ALIASES.get(k, k) if isinstance(k, str) else None

    @property
    def compaction_shape(self) -> str | None:
        """``"A"`` (G1/G2, ``first_kept_entry_id``), ``"B"`` (G3/G4, turn range) or None.

        Classified by which keys are present (§4.3); None for non-compactions and for compactions
        carrying neither key.
        """
        if self.kind != "compaction":
            return None
        p = self.payload
        if "first_turn_id" in p or "last_turn_id" in p:
            return "B"
        if "first_kept_entry_id" in p:
            return "A"
        return None

    @property
    def work_event(self) -> dict | None:
        """The event object of a ``work`` line (its second ``kind`` key)."""
        if self.kind != "work":
            return None
        ev = self.payload.get("kind")
        return ev if isinstance(ev, dict) else None

    # -- dunder ----------------------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Entry):
            return NotImplemented
        return (
            self.id == other.id
            and self.parent_id == other.parent_id
            and self.ts == other.ts
            and self.prev_hash == other.prev_hash
            and self.at_turn == other.at_turn
            and self.kind == other.kind
            and self.payload == other.payload
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Entry(id={self.id!r}, kind={self.kind!r}, parent_id={self.parent_id!r})"


def normalize_owner(owner: Any) -> Any:
    """A work item owner with the older ``"subagent"`` spelling read as ``"worker"``."""
    return "worker" if owner == "subagent" else owner
