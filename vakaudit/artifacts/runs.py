"""Runs: the 7.0 record chain of every run's steps (``runs/`` at the data root).

Rows ``{run, at, trace?, actor?, step, …}`` with steps opened, skipped, coalesced, session, settled
and abandoned; vak-session's reader fails on an undecodable row (baseline7.md §9.2).
"""

from __future__ import annotations

from vakaudit.artifacts._chain import chain_kind

KIND = chain_kind(
    __doc__,
    name="runs",
    title="Runs",
    dirs=("runs",),
    entries=(28,),
    owner="vak-session",
    trigger="a run opens, is skipped or coalesced, starts a session, settles or is abandoned",
    bound="Run 180 d (rule exists; class not observed yet)",
)
