"""The one definition of how a file name of a home is shown: names that are not UTF-8.

A POSIX file name is bytes. Python hands vakaudit such a name as a ``str`` whose undecodable bytes
are lone surrogates (``surrogateescape``, what :func:`os.fsdecode` does), so every path still opens.
Such a string cannot be written as UTF-8 (Parquet, JSON, a terminal), so everything vakaudit
outputs goes through :func:`shown`: a name that is valid UTF-8 stays as it is; in one that is not,
each byte that is not part of a UTF-8 sequence is written ``\\xNN`` (two lowercase hex digits;
Python's ``backslashreplace`` of the ``surrogateescape`` bytes). The escaped form alone is not
lossless (a valid name may spell ``\\xff`` itself), so the tables that carry a name also keep its
bytes (:func:`raw_bytes`, the ``rel_path_raw`` columns), null when the name is valid UTF-8.
"""

from __future__ import annotations

__all__ = ["raw_bytes", "shown"]


def shown(name: str) -> str:
    """``name`` as valid UTF-8 text: undecodable bytes (lone surrogates) escaped as ``\\xNN``."""
    if name.isascii():
        return name
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return _escaped(name)
    return name


def raw_bytes(name: str | None) -> bytes | None:
    """The bytes of a file name that is not valid UTF-8 (as the file system holds them), else None."""
    if name is None or name.isascii():
        return None
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape") if _escapable(name) else None
    return None


def _escapable(name: str) -> bool:
    return all(not 0xD800 <= ord(c) <= 0xDFFF or 0xDC80 <= ord(c) <= 0xDCFF for c in name)


def _escaped(name: str) -> str:
    if _escapable(name):
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    # a lone surrogate no file name can hold (text from elsewhere): its code point, \udXXX
    return name.encode("utf-8", "backslashreplace").decode("utf-8")
