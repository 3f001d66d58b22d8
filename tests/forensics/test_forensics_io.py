"""Line framing and the JSON depth measure, against independent computations."""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

from vakaudit.ledger.depth import MAX_JSON_DEPTH, json_depth
from vakaudit.ledger.evidence import iter_framed_lines, open_evidence


def test_framing_matches_split_for_every_chunk_size(tmp_path: Path) -> None:
    rng = random.Random(3)
    p = tmp_path / "f"
    for _ in range(300):
        parts = [bytes(rng.choice(b"ab\r") for _ in range(rng.choice([0, 1, 2, 5, 17, 40])))
                 for _ in range(rng.randint(0, 12))]  # fmt: skip
        data = b"\n".join(parts) + (b"\n" if rng.random() < 0.5 else b"")
        p.write_bytes(data)
        expected, off = [], 0
        segs = data.split(b"\n")
        for n, seg in enumerate(segs[:-1], 1):
            expected.append((n, off, seg, True))
            off += len(seg) + 1
        if segs[-1]:
            expected.append((len(segs), off, segs[-1], False))
        fd = open_evidence(p)
        try:
            for chunk in (1, 2, 3, 7, 64, 1 << 20):
                assert list(iter_framed_lines(fd, len(data), chunk)) == expected
        finally:
            os.close(fd)


def _true_depth(o: object) -> int:
    if isinstance(o, list | dict):
        vals = o.values() if isinstance(o, dict) else o
        return 1 + max((_true_depth(v) for v in vals), default=0)
    return 0


def test_json_depth_is_exact_above_the_limit_and_never_above_it_below() -> None:
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 5000))
    rng = random.Random(5)
    alphabet = 'ab[]{}"\\\n :,'

    def s() -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))

    def gen(d: int) -> object:
        r = rng.random()
        if d > 4 or r < 0.2:
            return s() if r < 0.15 else rng.randint(0, 9)
        if r < 0.6:
            return [gen(d + 1) for _ in range(rng.randint(0, 3))]
        return {s(): gen(d + 1) for _ in range(rng.randint(0, 3))}

    deep = 0
    for i in range(1500):
        o = gen(0)
        if i % 3 == 0:  # wrap in 100-200 levels, with brackets and escapes inside strings on the way
            for _ in range(rng.randint(100, 200)):
                o = [o, s()] if rng.random() < 0.5 else {s(): o, s(): [s(), "[[["]}
        raw = json.dumps(o, ensure_ascii=False, separators=(",", ":")).encode()
        true, got = _true_depth(o), json_depth(raw)
        if true > MAX_JSON_DEPTH or got > MAX_JSON_DEPTH:
            assert got == true
            deep += 1
        else:
            assert got <= MAX_JSON_DEPTH
    assert deep > 50
    assert json_depth(b"[" * 10_000 + b"]" * 10_000) == 10_000
    assert json_depth(b'["' + b"[" * 500 + b'"]') <= MAX_JSON_DEPTH
