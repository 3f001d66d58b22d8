"""Re-derive the provider requests vak sent from a session ledger, and check them against it.

`iter_requests(ledger_or_path)` yields one :class:`ReplayStep` per execute receipt (request,
checks, prefix-cache break) for a `SessionLog`, a ledger file or a whole home: a JSONL-era home's
ledger files, or a 7.0 home's conversation directories (their frames opened with ``keys``, the
interface objects read from the tenant store: :mod:`vakaudit.replay.v7`). Reads only.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from vakaudit.errors import LedgerError
from vakaudit.ledger import SessionLog
from vakaudit.names import shown
from vakaudit.replay.checks import CHECK_NAMES, CheckName, CheckResult, CheckStatus
from vakaudit.replay.engine import (
    PrefixBreak,
    ReplayStep,
    StepRequestBuilder,
    build_step_request,
    replay_log,
)
from vakaudit.replay.ledgers import iter_ledger_paths
from vakaudit.replay.prefix import estimate_tokens, prefix_chars, prefix_digest, request_message_chars
from vakaudit.replay.request import HostParams, NeutralRequest, Regime, cache_breakpoints, compose_tail
from vakaudit.replay.serialize import anthropic_body, openai_body, serialize
from vakaudit.replay.v7 import V7Ledger, conversation_dirs, open_v7_ledger
from vakaudit.storage import KeyRing

__all__ = [
    "CHECK_NAMES",
    "CheckName",
    "CheckResult",
    "CheckStatus",
    "HostParams",
    "NeutralRequest",
    "PrefixBreak",
    "Regime",
    "ReplayProgress",
    "ReplayStep",
    "StepRequestBuilder",
    "V7Ledger",
    "anthropic_body",
    "build_step_request",
    "cache_breakpoints",
    "compose_tail",
    "conversation_dirs",
    "is_v7_home",
    "estimate_tokens",
    "iter_ledger_paths",
    "iter_requests",
    "open_v7_ledger",
    "openai_body",
    "prefix_chars",
    "prefix_digest",
    "replay_log",
    "request_message_chars",
    "serialize",
    "step_request_message_chars",
]


@dataclass(frozen=True, slots=True)
class ReplayProgress:
    """What :func:`iter_requests`' progress callback receives: the ledgers replayed so far of those
    listed, the steps yielded so far, and the ledger about to be replayed (escaped by
    :func:`vakaudit.names.shown`; None once every ledger is done)."""

    ledgers_done: int
    ledgers_total: int
    steps_done: int
    ledger: str | None = None


def iter_requests(
    ledger_or_path: SessionLog | str | os.PathLike,
    *,
    host: HostParams | None = None,
    session: str | None = None,
    generation: str | None = None,
    on_ledger: Callable[[str], None] | None = None,
    on_error: Callable[[Path, LedgerError | OSError], None] | None = None,
    progress: Callable[[ReplayProgress], None] | None = None,
    keys: KeyRing | None = None,
    on_v7: Callable[[V7Ledger], None] | None = None,
) -> Iterator[ReplayStep]:
    """Every execute step of one ledger (a `SessionLog` or a file) or of every ledger of a home.

    `session` keeps only ledgers whose header session id (or file stem) equals it. Ledgers are
    opened read-only and closed after their steps were yielded. ``on_error``: a ledger that is not
    replayable (a :class:`~vakaudit.errors.LedgerError`, or an ``OSError``: unreadable, vanished) is
    handed to it and the next ledger is replayed (without it, the error is raised). ``progress``
    gets a :class:`ReplayProgress` before each ledger and once after the last.

    A 7.0 home (:func:`is_v7_home`): each conversation directory is read with ``keys``
    (:func:`open_v7_ledger`) and handed to ``on_v7`` before its steps; one whose frames cannot be
    read (sealed, no keys) yields no steps.
    """
    if isinstance(ledger_or_path, SessionLog):
        yield from replay_log(ledger_or_path, host=host, generation=generation)
        return
    if is_v7_home(ledger_or_path):
        yield from _iter_v7(Path(ledger_or_path), host, session, generation, keys, on_ledger, on_error,
                            progress, on_v7)
        return
    paths = list(iter_ledger_paths(ledger_or_path)) if progress is not None else iter_ledger_paths(ledger_or_path)
    total = len(paths) if isinstance(paths, list) else 0
    steps = 0
    for done, path in enumerate(paths):
        if progress is not None:
            progress(ReplayProgress(done, total, steps, shown(str(path))))
        try:
            if session is not None and path.stem != session:
                with SessionLog.open_read_only(path) as log:
                    header = log.header
                    sid = header.payload.get("session_id") if header is not None else None
                if sid != session:
                    continue
            if on_ledger is not None:
                on_ledger(str(path))
            with SessionLog.open_read_only(path) as log:
                for step in replay_log(log, host=host, generation=generation):
                    steps += 1
                    yield step
        except (LedgerError, OSError) as exc:
            if on_error is None:
                raise
            on_error(path, exc)
    if progress is not None:
        progress(ReplayProgress(total, total, steps, None))


def is_v7_home(path: str | os.PathLike) -> bool:
    """A 7.0 data-baseline home (a ``tenants/`` tree in it, baseline7.md §1.4)."""
    from vakaudit.scan.walk import has_tenants_tree

    p = Path(path).expanduser()
    return p.is_dir() and has_tenants_tree(p)


def _iter_v7(root: Path, host: HostParams | None, session: str | None, generation: str | None,
             keys: KeyRing | None, on_ledger: Callable[[str], None] | None,
             on_error: Callable[[Path, LedgerError | OSError], None] | None,
             progress: Callable[[ReplayProgress], None] | None,
             on_v7: Callable[[V7Ledger], None] | None) -> Iterator[ReplayStep]:
    from vakaudit.replay.v7 import _tenants

    dirs = list(conversation_dirs(root))
    tenants = _tenants(root, keys)
    steps = 0
    for done, d in enumerate(dirs):
        if progress is not None:
            progress(ReplayProgress(done, len(dirs), steps, shown(str(d))))
        try:
            ledger = open_v7_ledger(root, d, keys, tenants)
            if session is not None:
                header = ledger.log.header if ledger.log is not None else None
                sid = header.payload.get("session_id") if header is not None else d.name
                if sid != session and d.name != session:
                    continue
            if on_ledger is not None:
                on_ledger(str(d))
            if on_v7 is not None:
                on_v7(ledger)
            if ledger.log is None:
                continue
            for step in replay_log(ledger.log, host=host, generation=generation, interfaces=ledger.interfaces):
                steps += 1
                yield step
        except (LedgerError, OSError) as exc:
            if on_error is None:
                raise
            on_error(d, exc)
    if progress is not None:
        progress(ReplayProgress(len(dirs), len(dirs), steps, None))


# The builder lives on the log itself (a private attribute), so it is freed with the log: a mapping
# keyed by the log whose value refers back to the log would keep every log alive.
_BUILDER_ATTR = "_vakaudit_step_request_builder"


def step_request_message_chars(log: SessionLog, tail_text: str | None = None) -> int:
    """Message chars (§10.1, tail included) of the execute step about to be dispatched on `log`.

    For writers of spec-following ledgers: call right before appending the step's execute
    receipt. One incremental builder is kept per open log, so calling it at every step of a session
    costs linear time. `tail_text` replaces the tail the replay would compose from the ledger (with
    default host parameters); pass None to use the composed one, which is what `vakaudit replay`
    checks against.
    """
    builder = getattr(log, _BUILDER_ATTR, None)
    if builder is None:
        builder = StepRequestBuilder(log)
        setattr(log, _BUILDER_ATTR, builder)
    return builder.message_chars(tail=tail_text)
