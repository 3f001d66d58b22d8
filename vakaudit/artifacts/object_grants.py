"""Object grants: one wrapped object key per (object, scope) in the 7.0 tenant store.

Lives at ``tenants/<t>/store/cas/grants/<64-hex id>/<hex(scope)>``. Each file is a WrappedKey (KEK
version, scope, AES-256-GCM of the object key) naming the scope its file name spells; a scope's
grant is what lets a conversation, an artifact or a Document read the object. Written by vak-storage
``ObjectStore::put`` / ``grant`` (tmp + fsync + rename); ``remove_grant`` deletes one; key rotation
rewrites them; GC removes an object's whole grant directory (baseline7.md §4.4, §4.6). Never opened
by the scan: the names alone attribute objects to scopes.
"""

from __future__ import annotations

from vakaudit.artifacts._base import Discipline, RegistryClass, WriteCard, WriteGroup
from vakaudit.artifacts._tenant import tenant_kind

KIND = tenant_kind(
    __doc__,
    name="object_grants",
    title="Object grants",
    paths=("store/cas/grants/**",),
    card=WriteCard(
        writer="ObjectStore::put / grant — vak-storage (for vak-session)",
        trigger="an object is stored or shared for a scope; key rotation rewraps",
        discipline="tmp + fsync + rename, then directory fsync; re-putting touches the mtime",
        barriers_per_write=2,
        read="one grant per read of an object; GC lists them",
        bound="removed with the object, or one by one by remove_grant",
        group=WriteGroup.LEDGER,
        read_class="flat",
        style=Discipline.REPLACE,
    ),
    registry_class=RegistryClass.RECORD,
    entries=(2,),
    vak_class="Object",
    owner="vak-session",
)
