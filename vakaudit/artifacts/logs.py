"""Service logs: unstructured ``*.log`` files of vak-ops and the desktop app, when inside the home.

Lives in the Logs root: ``<H>/logs/`` with ``VAK_HOME``, else ``$XDG_STATE_HOME/vak/logs`` or
``~/Library/Logs/vak`` (outside the data home, so only a ``VAK_HOME`` tree holds them); a stray
``*.log`` elsewhere in the home lands here too (``feeds/security.log`` is JSONL and has its own kind).
Written by vak-ops and the desktop (e.g. ``desktop.log``), appended without fsync; no timestamps or
levels in G1 (D9). Registry: Logs root, Ledger, Untouched, not backed up (home.md §1, §10). No rows:
the text is not structured.
"""

from __future__ import annotations

from vakaudit.artifacts._base import ArtifactKind, Baseline7, Discipline, RegistryClass, WriteCard, WriteGroup

KIND = ArtifactKind(
    name="logs",
    title="Service logs",
    patterns=("logs/**", "**/*.log"),
    card=WriteCard(
        writer="vak-ops, vak-desktop",
        trigger="service output",
        discipline="append, no fsync",
        barriers_per_write=0,
        read="by people",
        bound="none (outside vak's control: log rotation, if any, is the OS's)",
        group=WriteGroup.OTHER,
        read_class="flat",
        style=Discipline.APPEND,
    ),
    v7=Baseline7(('logs/**',), (68,), vak_class='Telemetry', owner='vak-ops'),
    registry_class=RegistryClass.LEDGER,
    description=__doc__,
    priority=1,
)
