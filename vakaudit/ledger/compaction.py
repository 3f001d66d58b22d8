"""Turn-counting compaction planning of G2 (3.5.0; spec ledger.md §7.1, §7.5, §7.6).

In G2 ``plan_compaction(keep_recent)`` keeps the API of the message-level planner but counts whole
turns. Restated from vak-session's 3.5.0 log.rs: the current plan-free projection (already reflecting
the cumulative boundary) is grouped into contiguous runs of messages of the same turn, every
summary message forming one separate run that is never counted. With ``n`` turn runs, nothing is
planned when ``n <= keep_recent``; otherwise the first ``n - keep_recent`` turns are dropped:

- ``older``: every projected message before the first kept turn, the prior ``<context_summary>``
  included (so a repeated compaction summarises the summary, not raw history);
- ``first_kept_entry_id``: the first kept turn's id (its directive entry id);
- partition: ``dropped_entry_ids`` / ``selected_entry_ids`` are TURN ids, dropped vs kept.

vak's code counts the still-open turn as a kept run (it is always the last run, so it is never
summarised while ``keep_recent >= 1``), although its doc comment says the open turn is excluded from
the count; the code's behaviour is what is reproduced. With ``keep_recent == 0`` vak indexes past the
end of its run list (a panic); here the result is None.

Pure computation; no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vakaudit.ledger.turns import Generation, TurnIndex, coerce_generation

__all__ = ["plan_turn_compaction"]


def plan_turn_compaction(chain: Sequence[Any] | TurnIndex, keep_recent: int) -> Any:
    """The G2 compaction plan (a :class:`~vakaudit.ledger.projection.CompactionPlan`) or None.

    ``chain`` is the active chain (root first) or a G2 :class:`TurnIndex` of it.
    """
    from vakaudit.ledger.projection import CompactionPlan, derive_tagged

    if isinstance(chain, TurnIndex):
        if chain.generation != Generation.G2:
            raise ValueError(f"turn index was built for {chain.generation}, not g2")
        index = chain
    else:
        index = TurnIndex.from_chain(chain, generation=coerce_generation("g2"))
    tagged = derive_tagged(index, generation=Generation.G2)
    # vak keys every message of a turn (full record or open turn) by the turn id
    owner = {e.id: t.turn_id for t in index.turns if not t.closed for e in t.raw_tail}
    runs: list[list[Any]] = []  # [turn id or None for a summary run, start, end]
    for i, p in enumerate(tagged):
        key = None if p.is_summary else owner.get(p.entry_id, p.entry_id)
        if runs and runs[-1][0] == key:
            runs[-1][2] = i + 1
        else:
            runs.append([key, i, i + 1])
    turn_runs = [r for r in runs if r[0] is not None]
    if keep_recent <= 0 or len(turn_runs) <= keep_recent:
        return None
    boundary = len(turn_runs) - keep_recent
    first_kept = turn_runs[boundary]
    return CompactionPlan(
        older=tuple(p.message for p in tagged[: first_kept[1]]),
        first_kept_entry_id=first_kept[0],
        selected_entry_ids=tuple(r[0] for r in turn_runs[boundary:]),
        dropped_entry_ids=tuple(r[0] for r in turn_runs[:boundary]),
    )
