"""Locks and sockets: ephemeral coordination files, sized but never read.

Where: ``locks/`` (vak-server; Derived, Rebuilt, not backed up), ``broker.sock`` (vak-tools) and
``agent-network/broker.sock``, any other ``*.sock``, and every ``*.lock`` no owning kind claims
(``inbox.dedupe.lock``, ``commitments.lock`` and the memory locks belong to their ledgers). Writers
create them with create-new or bind a socket and remove or rebuild them at will (home.md §3.2, §10).
No rows: sockets and locks are never opened.
"""

from __future__ import annotations

from vakaudit.artifacts._base import ArtifactKind, Baseline7, Discipline, RegistryClass, WriteCard, WriteGroup

KIND = ArtifactKind(
    name="locks",
    title="Locks and sockets",
    patterns=("**/locks/**", "**/*.lock", "**/broker.sock", "**/agent-network/broker.sock", "**/*.sock"),
    card=WriteCard(
        writer="vak-server (locks/), vak-tools (broker.sock), and each ledger's own lock protocol",
        trigger="process start, and around guarded appends",
        discipline="create-new lock files / bound sockets; removed or rebuilt at will",
        barriers_per_write=0,
        read="never read: existence is the signal",
        bound="ephemeral",
        group=WriteGroup.OTHER,
        read_class="flat",
        style=Discipline.EPHEMERAL,
    ),
    v7=Baseline7(('**/locks/**', '**/*.lock', '**/broker.sock', '**/*.sock'), (63, 64), vak_class='Ephemeral', owner='vak-server, vak-tools'),
    registry_class=RegistryClass.DERIVED,
    description=__doc__,
    priority=4,  # same layer as the config trees: the more specific pattern wins
)
