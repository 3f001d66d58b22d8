"""A store read through the walk's listing (StoreListing) says what the store itself says, and falls
back to its own listing wherever the walk saw something other than a regular file."""

from __future__ import annotations

import os
from pathlib import Path

from vakaudit.forensics.home7 import Home7Report, _check_store
from vakaudit.scan.store7 import store_listing
from vakaudit.scan.walk import iter_home_files
from vakaudit.storage import Store
from vakaudit.storage.keys import scope_file_name
from vakaudit.storage.objects import StoreListing

A = "a" * 64
B = "b" * 63 + "1"
C = "c" * 64  # granted, no body
D = "d" * 64  # body, no grant


def _store(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    store = home / "tenants" / "ten_1" / "store"
    for oid, size in ((A, 10), (B, 7), (D, 3)):
        p = store / "cas" / "objects" / oid[:2] / oid[2:]
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"x" * size)
    for oid, scopes in ((A, ["conversation:2", "conversation:1"]), (B, ["space:s"]), (C, ["conversation:3"])):
        for scope in scopes:
            g = store / "cas" / "grants" / oid / scope_file_name(scope)
            g.parent.mkdir(parents=True, exist_ok=True)
            g.write_bytes(b"w")
    (store / "cas" / "grants" / ("e" * 64)).mkdir()  # an empty grant directory
    return home


def _listing(home: Path) -> StoreListing | None:
    return store_listing(list(iter_home_files(home)), "tenants/ten_1/store")


def test_listing_from_the_walk_holds_sizes_and_sorted_scopes(tmp_path: Path) -> None:
    home = _store(tmp_path)
    listing = _listing(home)
    assert listing is not None
    assert listing.sizes == {A: 10, B: 7, D: 3}
    assert listing.scopes == {A: ["conversation:1", "conversation:2"], B: ["space:s"], C: ["conversation:3"]}
    store = Store(home / "tenants" / "ten_1" / "store", listing=listing)
    assert store.object_ids() == [A, B, D]
    assert store.granted_ids() == [A, B, C, "e" * 64]  # the empty directory is listed from disk
    assert [store.grants(o) for o in (A, B, C, D)] == [["conversation:1", "conversation:2"], ["space:s"],
                                                       ["conversation:3"], []]
    assert [store.stored_bytes(o) for o in (A, B, C)] == [10, 7, None]


def test_a_symlink_under_the_store_sends_that_part_back_to_the_store_s_own_listing(tmp_path: Path) -> None:
    home = _store(tmp_path)
    store_dir = home / "tenants" / "ten_1" / "store"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "body").write_bytes(b"y" * 5)
    (outside / "grant").write_bytes(b"w")
    f = "f" * 64
    (store_dir / "cas" / "objects" / "ff").mkdir()
    os.symlink(outside / "body", store_dir / "cas" / "objects" / "ff" / f[2:])
    os.symlink(outside / "grant", store_dir / "cas" / "grants" / B / scope_file_name("space:t"))
    listing = _listing(home)
    assert listing is not None and listing.sizes is None  # objects: listed again, symlinks followed
    assert B not in listing.scopes and listing.scopes[A] == ["conversation:1", "conversation:2"]
    store = Store(store_dir, listing=listing)
    assert store.object_ids() == [A, B, D, f]
    assert store.grants(B) == ["space:s", "space:t"]
    assert store.stored_bytes(f) == 5


def test_verify_s_store_checks_are_the_same_with_and_without_the_listing(tmp_path: Path) -> None:
    home = _store(tmp_path)
    files = list(iter_home_files(home))
    store_dir = home / "tenants" / "ten_1" / "store"
    alone = _check_store(home, store_dir, None, Home7Report())
    walked = _check_store(home, store_dir, None, Home7Report(), files)
    codes = sorted((f.code, f.entry_id) for f in walked)
    # D has a body and no grant; C and the empty directory have grants and no body
    assert codes == sorted([("object_without_grant", D), ("grant_without_object", C),
                            ("grant_without_object", "e" * 64)])
    assert walked == alone
