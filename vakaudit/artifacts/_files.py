"""What a reader takes from a file as a whole: names in its relative path (:func:`basename`,
:func:`parent_name`, and the per-file column sources :func:`file_stem` and :func:`parent_dir`), and
the whole content of a small document (:func:`read_small`; :func:`too_large` is the finding for one
over its cap).

Reads only through ``ReadContext.open()``; never writes.
"""

from __future__ import annotations

from vakaudit.artifacts._base import ReadContext
from vakaudit.findings import Finding, FindingCode, Severity


def basename(rel_path: str) -> str:
    return rel_path.rsplit("/", 1)[-1]


def parent_name(rel_path: str) -> str | None:
    """Name of the directory that holds ``rel_path`` (e.g. the ``<wskey>`` of a memory file)."""
    parts = rel_path.split("/")
    return parts[-2] if len(parts) >= 2 else None


def file_stem(ctx: ReadContext) -> str:
    return basename(ctx.rel_path).rsplit(".", 1)[0]


def parent_dir(ctx: ReadContext) -> str | None:
    return parent_name(ctx.rel_path)


def read_small(ctx: ReadContext, cap: int) -> bytes | None:
    """Whole content of a small document file, or None when it is larger than ``cap`` bytes."""
    # the line reader's module on the first read: kinds import this one to be declared, not to read
    from vakaudit.artifacts._lines import CHUNK_BYTES

    parts: list[bytes] = []
    total = 0
    with ctx.open() as f:
        while total <= cap:
            chunk = f.read(min(CHUNK_BYTES, cap + 1 - total))
            if not chunk:
                break
            parts.append(chunk)
            total += len(chunk)
    return None if total > cap else b"".join(parts)


def too_large(ctx: ReadContext, cap: int) -> Finding:
    return Finding(
        FindingCode.SIDECAR_UNPARSEABLE_ROW,
        Severity.WARNING,
        ctx.rel_path,
        f"document larger than {cap} bytes; not parsed (sized only)",
    )
