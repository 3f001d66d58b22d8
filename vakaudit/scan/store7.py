"""The tenant stores of a 7.0 home (layout g3) as tables: ``objects``, ``refs``, ``documents``.

One pass over each ``tenants/<tenant>/store`` (baseline7.md §4, §7), through
:class:`vakaudit.storage.Store`: keyless, every object with its stored size and the scopes its
grants name, every ref of ``refs.db`` (read from a private copy), every Document by its ``doc/`` ref;
with a :class:`~vakaudit.storage.KeyRing`, each Document's version chain is opened too (its content
object, sequence number and content size). Object and Document plaintext is never put in a row; key
material never reaches anything here. The pass is cheap next to the segment directories and is
made again on every scan.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from vakaudit.errors import ObjectUnavailableError
from vakaudit.findings import Finding
from vakaudit.scan.tables7 import _STORE_TABLES
from vakaudit.scan.walk import HomeFile, has_tenants_tree

if TYPE_CHECKING:
    import pyarrow as pa

    from vakaudit.storage import KeyRing, Store, TenantKeys
    from vakaudit.storage.objects import StoreListing


@dataclass(slots=True)
class StoreTables:
    """What :func:`read_store_tables` read: one Arrow table per name of :data:`STORE_TABLES`."""

    tables: dict[str, pa.Table]
    findings: list[Finding] = field(default_factory=list)


def tenant_dirs(root: Path) -> list[Path]:
    """The tenant directories under ``root/tenants`` (a local install has one), sorted."""
    if not has_tenants_tree(root):
        return []
    return sorted(p for p in (root / "tenants").iterdir() if p.is_dir() and not p.is_symlink())


def chain_key(directory: Path, rel_dir: str, tenants: list[tuple[Path, TenantKeys]]) -> bytes | None:
    """The key of a directory's ``KEY`` scope from the tenant that holds it (a local home has one
    tenant); the tenant's key reader reports an erased scope (info) or a missing key."""
    if not tenants:
        return None
    from vakaudit.storage.segments import read_key_scope

    scope = read_key_scope(directory)
    if scope is None:
        return None
    holder = next((tk for _t, tk in tenants if tk.state(scope) != "missing"), tenants[0][1])
    return holder.chain_key(directory, rel_dir).key


def store_listing(files: Iterable[HomeFile] | None, store_rel: str) -> StoreListing | None:
    """What the walk ``files`` saw under the store directory ``store_rel`` (relative to the home),
    for :class:`~vakaudit.storage.Store` to use instead of listing the store again; None without a walk."""
    if files is None:
        return None
    from vakaudit.storage.objects import StoreListing

    head = store_rel + "/cas"
    n = len(store_rel) + 1
    return StoreListing.from_entries(
        (hf.rel_path[n:], hf.file_type == "file", hf.size_bytes)
        for hf in files
        if hf.rel_path.startswith(head) and (len(hf.rel_path) == len(head) or hf.rel_path[len(head)] == "/")
    )


def read_store_tables(root: Path, keys: KeyRing | None = None, files: Iterable[HomeFile] | None = None) -> StoreTables:
    """The ``objects``, ``refs`` and ``documents`` rows of every tenant store of the home ``root``
    (``files``: a walk of the home already made, whose listing of the stores is used)."""
    from vakaudit.storage import Store  # the store's readers only where a home's store is read

    rows: dict[str, list[dict]] = {name: [] for name in _STORE_TABLES}
    findings: list[Finding] = []
    files = None if files is None else list(files)
    for tenant in tenant_dirs(root):
        store_dir = tenant / "store"
        if not store_dir.is_dir():
            continue
        rel = store_dir.relative_to(root).as_posix()
        store = Store(store_dir, keys, rel_dir=rel, listing=store_listing(files, rel))
        _tenant_rows(store, tenant.name, rows)
        findings.extend(store.findings)
    return StoreTables({name: _table(rows[name], _STORE_TABLES[name][0].arrow()) for name in _STORE_TABLES}, findings)


def _tenant_rows(store: Store, tenant: str, rows: dict[str, list[dict]]) -> None:
    from vakaudit.storage.documents import DOC_PREFIX
    from vakaudit.storage.objects import is_object_id, object_rel_path

    refs = store.refs()
    referenced: dict[str, list[str]] = {}
    for name, gen, epoch, target in refs:
        try:
            text = target.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        oid = text if text is not None and is_object_id(text) else None
        if oid is not None:
            referenced.setdefault(oid, []).append(f"ref:{name}")
        rows["refs"].append({"tenant": tenant, "rel_path": store.rel_of("refs.db"), "name": name,
                             "generation": gen, "epoch": epoch, "target": text,
                             "target_bytes": len(target), "target_object_id": oid})
    for name, _gen, _epoch, target in refs:
        if not name.startswith(DOC_PREFIX):
            continue
        doc = name[len(DOC_PREFIX):]
        rows["documents"].append(_document_row(store, tenant, doc, target, referenced))
    for oid in sorted(set(store.object_ids()) | set(store.granted_ids())):
        size = store.stored_bytes(oid)
        rows["objects"].append({"tenant": tenant, "object_id": oid,
                                "rel_path": store.rel_of(object_rel_path(oid)) if size is not None else None,
                                "stored_bytes": size, "scopes": store.grants(oid),
                                "referenced_by": sorted(set(referenced.get(oid, [])))})


def _document_row(store: Store, tenant: str, doc: str, target: bytes, referenced: dict[str, list[str]]) -> dict:
    from vakaudit.storage.documents import FORGOTTEN, document_scope, document_versions

    scope = document_scope(doc)
    forgotten = target == FORGOTTEN
    version_id = None if forgotten else target.decode("ascii", "replace")
    row = {"tenant": tenant, "name": doc, "scope": scope, "forgotten": forgotten, "version_id": version_id,
           "content_id": None, "seq": None, "content_bytes": None, "version_count": None}
    if store.keys is None or forgotten:
        return row
    try:
        versions = document_versions(store, doc, scope)
    except ObjectUnavailableError:
        versions = []
    if not versions:
        return row
    for v in versions:
        referenced.setdefault(v.id, []).append(f"doc:{doc}")
        referenced.setdefault(v.content, []).append(f"doc:{doc}")
    current = versions[0]
    row.update(content_id=current.content, seq=current.seq, version_count=len(versions))
    try:
        row["content_bytes"] = len(store.object(current.content, scope))
    except ObjectUnavailableError:
        pass
    return row


def with_entry_references(objects: pa.Table, referenced: dict[str, list[str]]) -> pa.Table:
    """``objects`` with each object's ``referenced_by`` extended by the ledger entries naming it
    (``entry:<segment rel_path>#<frame_index>``, read from unlocked frames), sorted like the rest."""
    import pyarrow as pa

    if not referenced or not objects.num_rows:
        return objects
    ids = objects["object_id"].to_pylist()
    old = objects["referenced_by"].to_pylist()
    new = [sorted(set(o or []) | set(referenced.get(oid, ()))) for oid, o in zip(ids, old, strict=True)]
    i = objects.schema.get_field_index("referenced_by")
    return objects.set_column(i, objects.schema.field(i), pa.array(new, objects.schema.field(i).type))


def _table(rows: list[dict], schema: pa.Schema) -> pa.Table:
    import pyarrow as pa

    return pa.Table.from_pylist(rows, schema=schema) if rows else schema.empty_table()
