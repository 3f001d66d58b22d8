"""Effects: the 7.0 record chain of outside effects (deliveries, mail, calendar) and their attempts.

Lives at ``effects/`` at the data root. Rows ``{effect, at, trace?, actor?, step, …}``: prepared
(kind, idempotency key, payload digest, payload object), dispatched, accepted, confirmed, failed,
unknown, reconciled, superseded (baseline7.md §9.2).
"""

from __future__ import annotations

from vakaudit.artifacts._chain import chain_kind

KIND = chain_kind(
    __doc__,
    name="effects",
    title="Effects",
    dirs=("effects",),
    entries=(29,),
    owner="vak-session",
    trigger="an effect is prepared, dispatched, acknowledged, reconciled or superseded",
)
