"""Tenant keys: wrapped scope keys, tombstones, holds and the revoked list of a 7.0 tenant.

Lives at ``tenants/<t>/keys/``: ``scopes/keys/<hex(scope)>`` (a WrappedKey per scope: the key that
seals a conversation's frames), ``scopes/tombstones/<hex(scope)>`` (``shredded``: the scope was
destroyed), ``scopes/holds/<hex(scope)>`` (``held``), ``scopes/tmp/`` staging, ``revoked`` (scope
names, one per line, append + fsync) and ``LOCK`` (flock around opening the key authority). Written
by vak-session's key authority: tmp + fsync + hard link or rename (baseline7.md §6). The key
encryption keys themselves live in the credential store, never here. The scan sizes these files;
verify reads only their names and the plain ``revoked``, ``shredded`` and ``held`` markers.
"""

from __future__ import annotations

from vakaudit.artifacts._base import Discipline, RegistryClass, WriteCard, WriteGroup
from vakaudit.artifacts._tenant import tenant_kind

KIND = tenant_kind(
    __doc__,
    name="tenant_keys",
    title="Tenant keys",
    paths=("keys/**",),
    card=WriteCard(
        writer="VaultKeyAuthority / ScopeKeys — vak-session",
        trigger="a conversation or scope is created, shared, held, shredded; KEK rotation",
        discipline="tmp + fsync + hard link (create-only) or rename; revoked: append + fsync",
        barriers_per_write=2,
        read="one key file per opened ledger or chain; tombstone checked on every lookup",
        bound="one file per scope",
        group=WriteGroup.SECRET,
        read_class="flat",
        style=Discipline.REPLACE,
    ),
    registry_class=RegistryClass.CONFIG,
    entries=(4,),
    vak_class="Desired",
    owner="vak-session",
)
