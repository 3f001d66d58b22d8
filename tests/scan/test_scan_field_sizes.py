"""entry_fields byte accounting: the fast re-encoding path agrees with a tokenizer on every line."""

from __future__ import annotations

from pathlib import Path

from vakaudit.artifacts._entry_fields import _split_fields_slow, field_sizes, kind_end
from vakaudit.ledger.entry import parse_envelope


def _lines(paths: list[Path]) -> list[bytes]:
    out = []
    for p in paths:
        out += [line for line in p.read_bytes().split(b"\n") if line]
    return out


def test_fast_field_sizes_equal_the_tokenizer(vak_samples: Path, tmp_path: Path) -> None:
    from vakaudit.synth import build_home

    home = tmp_path / "tiny"
    build_home(home, profile="tiny", seed=11, fsync=False)
    paths = [vak_samples / "basic/ledger.jsonl", vak_samples / "branch/ledger.jsonl"]
    paths += sorted(home.glob("**/sessions/*/*.jsonl"))
    lines = _lines(paths)
    assert len(lines) > 100
    for _ in range(2):  # the second pass uses the learned largest member per kind
        for raw in lines:
            env, payload = parse_envelope(raw)
            kind = env[5]
            got = field_sizes(raw, payload, kind_end(raw, kind), kind)
            assert got == _split_fields_slow(raw), raw[:120]
            assert sum(n for _, n in got) < len(raw)


def test_work_line_second_kind_is_its_own_field() -> None:
    raw = (
        b'{"id":"a","parent_id":null,"ts":"2026-09-20T10:11:12Z","kind":"work","contract_id":"w",'
        b'"revision":0,"kind":{"kind":"item_verified","item_id":"one","attempt":0}}'
    )
    env, payload = parse_envelope(raw)
    sizes = dict(field_sizes(raw, payload, kind_end(raw, "work"), "work"))
    assert sizes == {
        "contract_id": len(b',"contract_id":"w"'),
        "revision": len(b',"revision":0'),
        "kind": len(b',"kind":{"kind":"item_verified","item_id":"one","attempt":0}'),
    }
