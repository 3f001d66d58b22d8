"""What every 7.0 record chain kind shares: its path patterns, its write-map card and its kind.

A record chain (baseline7.md §3.6-§3.7) is a directory of ``seg-NNNNNNNN.log`` / ``.sealed`` frame
segments with ``seals.log``, ``LOCK`` and, for a chain owned by one conversation, ``KEY``. Side
ledgers of the JSONL era became such directories in 7.0; the kinds that exist in both eras add
:func:`chain_patterns` and a :class:`~vakaudit.artifacts._base.Baseline7` with :func:`chain_card`,
the 7.0-only chains are built by :func:`chain_kind`. No I/O here.
"""

from __future__ import annotations

from vakaudit.artifacts._base import ArtifactKind, Baseline7, Discipline, RegistryClass, WriteCard, WriteGroup


def chain_patterns(*dirs: str) -> tuple[str, ...]:
    """The files of record chain directories: everything directly inside each of ``dirs``."""
    return tuple(f"{d}/*" for d in dirs)


def chain_card(
    writer: str,
    trigger: str,
    bound: str,
    group: WriteGroup,
    *,
    relaxed: bool = False,
    relaxed_rows: str | None = None,
    relaxed_what: str = "",
) -> WriteCard:
    """The 7.0 card of a record chain: frames appended under ``LOCK``, sealed at 256 KiB.

    ``relaxed``: every row is appended without a sync of its own (telemetry rows); ``relaxed_rows``:
    the SQL predicate over the kind's table picking the rows that are (``relaxed_what`` names them).
    Analysis counts a chain's syncs per segment from these (the ``chain_syncs`` view)."""
    if relaxed:
        how, rows = "no sync of its own (telemetry rows)", "true"
    elif relaxed_rows:
        how, rows = f"one sync_data per append, none for {relaxed_what or 'telemetry rows'}", relaxed_rows
    else:
        how, rows = "one sync_data per append", None
    return WriteCard(
        writer=writer,
        trigger=trigger,
        discipline=(
            f"record chain: zstd frames appended under the LOCK flock, {how}"
            "; the open .log is sealed into seg-N.sealed at 256 KiB (.sealing copy, rename, seals.log)"
        ),
        barriers_per_write=0 if relaxed else 1,
        relaxed_rows=rows,
        read="RecordChain::read: every segment oldest first; rollups fold from a saved position",
        bound=bound,
        group=group,
        read_class="flat",
        style=Discipline.RECORD_CHAIN,
    )


def chain_kind(
    doc: str | None,
    *,
    name: str,
    title: str,
    dirs: tuple[str, ...],
    entries: tuple[int, ...],
    owner: str,
    trigger: str,
    bound: str = "none",
    group: WriteGroup = WriteGroup.EVIDENCE,
) -> ArtifactKind:
    """The kind of a record chain that exists only in 7.0 homes (sized and classified)."""
    card = chain_card(f"RecordChain::append — {owner}", trigger, bound, group)
    return ArtifactKind(
        name=name,
        title=title,
        patterns=(),
        card=card,
        registry_class=RegistryClass.RECORD,
        description=doc or "",
        append_only=False,  # segments are sealed and dropped whole (retention): not one growing file
        priority=12,  # above the catch-alls (``**/*.log``, ``**/*.lock``)
        v7=Baseline7(chain_patterns(*dirs), entries, vak_class="Record", owner=owner),
    )
