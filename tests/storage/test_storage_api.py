"""The storage API names (KeyRing, Store, read_chain, ...) exist with the parameters they are documented with (a contract)."""

from __future__ import annotations

import inspect

import vakaudit.storage as storage
from vakaudit.storage import GENESIS, KeyRing, Store, read_chain, read_frame, read_segments


def _params(fn) -> list[tuple[str, object]]:
    return [(p.name, p.default) for p in inspect.signature(fn).parameters.values()
            if p.kind is not inspect.Parameter.KEYWORD_ONLY]


def test_contract_signatures() -> None:
    assert GENESIS == bytes(32)
    assert _params(read_chain) == [("data", inspect.Parameter.empty), ("prev", GENESIS), ("key", None)]
    assert _params(read_frame)[:3] == [("data", inspect.Parameter.empty), ("offset", inspect.Parameter.empty),
                                       ("key", None)]
    assert _params(read_segments) == [("directory", inspect.Parameter.empty), ("key", None)]
    assert _params(Store)[:2] == [("tenant_store_dir", inspect.Parameter.empty), ("keys", None)]
    assert _params(KeyRing) == [("keks", inspect.Parameter.empty), ("object_id_key", None)]
    assert _params(KeyRing.from_file) == [("path", inspect.Parameter.empty), ("passphrase", None)]
    for name in ("object", "grants", "refs", "document"):
        assert callable(getattr(Store, name))


def test_result_fields() -> None:
    r = read_chain(b"")
    for name in ("frames", "head", "valid_len", "torn_tail", "broken_at", "encrypted_frames", "findings"):
        assert hasattr(r, name)
    assert [f.name for f in __import__("dataclasses").fields(storage.Frame)][:6] == [
        "index", "offset", "size_bytes", "flags", "sealed", "entry"]
    assert all(hasattr(storage, n) for n in storage.__all__)
