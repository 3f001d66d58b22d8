"""Tenant objects: the sealed bodies of the 7.0 content-addressed store, one file per object.

Lives at ``tenants/<t>/store/cas/objects/<id[0:2]>/<id[2:64]>``, staging at ``store/cas/tmp/<pid>-<n>``
(debris when left over). Written by vak-storage ``ObjectStore::put`` (vak-session owns the store):
staged tmp file, ``sync_all``, hard link (create-only), parent directory fsync. A body is
``nonce || AES-256-GCM(object key, aad = id, zstd(plaintext))``; the id is the HMAC-SHA256 of the
plaintext under the tenant's id key, so equal content is one object. Capability interfaces, tool
results, checkpoint contents, sealed row content and Document versions live here. Collected when no
grant is live (baseline7.md §4).
"""

from __future__ import annotations

from vakaudit.artifacts._base import Discipline, RegistryClass, WriteCard, WriteGroup
from vakaudit.artifacts._tenant import tenant_kind

KIND = tenant_kind(
    __doc__,
    name="objects",
    title="Tenant objects",
    paths=("store/cas/objects/**", "store/cas/tmp/**"),
    card=WriteCard(
        writer="ObjectStore::put — vak-storage (for vak-session)",
        trigger="a turn's interface, tool result, checkpoint file, sealed row content or Document save",
        discipline="tmp + sync_all + hard link (create-only) + directory fsync; equal content is one object",
        barriers_per_write=2,
        read="by id with a grant's key, on demand",
        bound="GC when no grant is live (1 h grace)",
        group=WriteGroup.LEDGER,
        read_class="flat",
        style=Discipline.REPLACE,
    ),
    registry_class=RegistryClass.RECORD,
    entries=(2,),
    vak_class="Object",
    owner="vak-session",
)
