"""When vak 7.0's session-ledger writer syncs: group commit (baseline7.md §8.3) and sealing (§3.6).

The one definition of these facts: the synthetic 7.0 writer syncs by them and the data-baseline
scorecard counts a home's ledger syncs by them. No I/O here.

- Every entry is one frame appended unsynced. ``fdatasync`` follows a commit point: a ``header``,
  ``turn_card`` or ``call_effect`` entry, a user ``message`` without ``meta.control`` (directives,
  steering messages, tool-result messages), or an ``activity`` whose ``data`` has ``request_id``
  (request admission; the ``req/<session>/<sha256>`` ref is created right after it).
- Frames after the last commit point are synced when the writer is dropped (one sync), or lost as
  whole tail frames in a crash.
- Sealing a segment costs four syncs: the ``.sealing`` copy (``sync_all``), the directory after the
  rename to ``.sealed``, the ``seals.log`` entry, the directory after the ``.log`` is removed; the
  open ``.log``'s unsynced tail is synced first.
"""

from __future__ import annotations

from typing import Any

#: Entry kinds that are always commit points.
COMMIT_KINDS: tuple[str, ...] = ("header", "turn_card", "call_effect")

#: Syncs one segment seal costs (besides syncing the open ``.log``'s unsynced tail).
SEAL_SYNCS = 4

#: The prefix of the ref created once per admitted request, right after its synced activity.
REQUEST_REF_PREFIX = "req/"


def commit_point(kind: str | None, role: str | None, control: object, admits_request: bool) -> bool:
    """Whether vak syncs right after appending an entry with these facts: its ``kind``, its message's
    ``role``, its ``meta.control`` (None: absent) and whether its ``data`` has ``request_id``."""
    if kind in COMMIT_KINDS:
        return True
    if kind == "message":
        return role == "user" and control is None
    if kind == "activity":
        return admits_request
    return False


def is_commit_point(entry: dict[str, Any]) -> bool:
    """Whether vak syncs right after appending ``entry`` (a parsed 7.0 ledger entry)."""
    kind = entry.get("kind")
    msg = entry.get("message") if isinstance(entry.get("message"), dict) else {}
    meta = entry.get("meta") if isinstance(entry.get("meta"), dict) else {}
    data = entry.get("data")
    return commit_point(
        kind if isinstance(kind, str) else None,
        msg.get("role"),
        meta.get("control"),
        isinstance(data, dict) and "request_id" in data,
    )


def commit_point_sql(kind: str = "kind", role: str = "role", control: str = "control") -> str:
    """A SQL predicate over a table of entries (one row per entry, with its kind, message role and
    ``meta.control``) that holds for the commit points it can see: every rule above except the
    admission activity, whose ``data`` such a table does not keep (count those by their ``req/``
    refs instead)."""
    kinds = ", ".join(f"'{k}'" for k in COMMIT_KINDS)
    return f"({kind} IN ({kinds}) OR ({kind} = 'message' AND {role} = 'user' AND {control} IS NULL))"


__all__ = ["COMMIT_KINDS", "REQUEST_REF_PREFIX", "SEAL_SYNCS", "commit_point", "commit_point_sql", "is_commit_point"]
