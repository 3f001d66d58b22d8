"""zstd payloads: what vak's reader (ZSTD_decompressDCtx) accepts is accepted, nothing else."""

from __future__ import annotations

import pytest
import zstandard

from vakaudit.storage.codec import CodecError, unzstd, zstd_level3, zstd_raw


@pytest.mark.parametrize("n", [0, 1, 255, 256, 65791, 65792, 131071, 131072, 300_000])
def test_raw_block_frames_of_every_header_width_decode(n: int) -> None:
    data = bytes(i % 251 for i in range(n))
    frame = zstd_raw(data)
    assert unzstd(frame) == data
    assert zstandard.ZstdDecompressor().decompress(frame) == data  # any decoder reads it
    assert len(frame) == 4 + (2 if n < 256 else 3 if n < 65792 else 5) + 3 * max(1, -(-n // 131071)) + n


def test_variants_vaks_reader_accepts() -> None:
    no_size = zstandard.ZstdCompressor(write_content_size=False).compress(b"abc" * 100)
    assert unzstd(no_size) == b"abc" * 100
    assert unzstd(zstd_raw(b"a") + zstd_level3(b"b")) == b"ab"  # concatenated frames
    skippable = (0x184D2A53).to_bytes(4, "little") + (3).to_bytes(4, "little") + b"xyz"
    assert unzstd(skippable + zstd_raw(b"c")) == b"c"
    assert unzstd(b"") == b""


@pytest.mark.parametrize("bad", [b"plain text", zstd_raw(b"abcdef")[:-2], zstd_raw(b"a") + b"junk"])
def test_what_is_not_zstd_is_refused(bad: bytes) -> None:
    with pytest.raises(CodecError):
        unzstd(bad)


def test_declared_size_over_the_limit_is_refused_before_decoding() -> None:
    with pytest.raises(CodecError, match="limit"):
        unzstd(zstd_raw(b"x" * 100), limit=99)
