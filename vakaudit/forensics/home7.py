"""Verify what a 7.0 data-baseline home adds: segment directories, scope keys and object grants.

Keyless, like vak's own ``vak data verify`` but further (baseline7.md §12.1): every segment
directory of the home (session ledgers and record chains) is read by
:func:`vakaudit.storage.iter_segments`, whose frame and segment findings (bad link, bad length,
torn tail, seal mismatch, discontinuity, gaps versus retention drops, ``.sealing`` leftovers) are
passed on as they are. On top, per home: a ``KEY`` naming a destroyed scope is an erased
conversation (``conversation_erased``, info: its frames verify and can never be read, by
design), a ``KEY`` naming a scope with no key and no tombstone is ``scope_key_missing``; an object
body with no grant and a grant directory with no body are ``object_without_grant`` and
``grant_without_object``.

Only names are listed and the plain marker files (``KEY``, ``keys/revoked``) read: no key file, no
object body and no grant is opened. Never writes, locks or repairs anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from vakaudit.findings import Finding, FindingCode, Severity
from vakaudit.scan.walk import HomeFile
from vakaudit.storage import iter_segments

__all__ = ["Home7Report", "segment_dirs", "verify_home7"]

# Tenant tree paths (baseline7.md §2.2, §4.2, §6.6). vakaudit.storage's object and key readers own
# this layout; these names go once they are available from there.
_SCOPE_KEYS = "keys/scopes/keys"
_TOMBSTONES = "keys/scopes/tombstones"
_REVOKED = "keys/revoked"
_OBJECTS = "store/cas/objects"
_GRANTS = "store/cas/grants"


@dataclass(slots=True)
class Home7Report:
    """What :func:`verify_home7` checked and found."""

    segment_dirs: int = 0
    segments: int = 0
    frames: int = 0
    bytes_verified: int = 0
    findings: list[Finding] = field(default_factory=list)


def segment_dirs(files: Iterable[HomeFile]) -> list[str]:
    """The directories (relative to the home) holding a ``seg-*`` file or a ``seals.log``, sorted.

    vak's rule is "any ``seg-*.log|.sealed``" (baseline7.md §12.1); a directory left with only a
    ``.sealing`` copy or only its ``seals.log`` (every segment dropped) is read too, so that the
    segment reader can say what is wrong with it.
    """
    dirs: set[str] = set()
    for hf in files:
        if hf.file_type != "file" or "/" not in hf.rel_path:
            continue
        parent, name = hf.rel_path.rsplit("/", 1)
        if name.startswith("seg-") or name == "seals.log":
            dirs.add(parent)
    return sorted(dirs)


def verify_home7(
    root: Path, files: list[HomeFile], progress: Callable[[str, int], None] | None = None
) -> Home7Report:
    """Verify the segment directories, scope keys and object grants of the 7.0 home at ``root``."""
    report = Home7Report()
    sizes = {hf.rel_path: hf.size_bytes for hf in files}
    tenants = sorted(p for p in (root / "tenants").iterdir() if p.is_dir() and not p.is_symlink())
    for rel_dir in segment_dirs(files):
        if progress is not None:
            progress(rel_dir, sum(v for k, v in sizes.items() if k.startswith(rel_dir + "/")))
        walk = iter_segments(root / rel_dir, None, rel_dir=rel_dir)
        for _segment, _frames in walk:
            pass  # the walk verifies each segment as the next one is taken
        report.segment_dirs += 1
        report.segments += len(walk.segments)
        report.frames += sum(s.chain.entries for s in walk.segments)
        report.bytes_verified += sum(s.size_bytes for s in walk.segments)
        report.findings.extend(walk.findings)  # the segment checks and every segment's chain findings
        if walk.scope is not None:
            report.findings.extend(_check_scope(root, tenants, f"{rel_dir}/KEY", walk.scope))
    for tenant in tenants:
        report.findings.extend(_check_objects(root, tenant))
    return report


def _scope_file(scope: str) -> str:
    """A scope's file name under the key and grant directories: lowercase hex of its UTF-8 bytes."""
    return scope.encode("utf-8").hex()


def _revoked(tenant: Path) -> set[str]:
    try:
        text = (tenant / _REVOKED).read_bytes().decode("utf-8", "replace")
    except OSError:
        return set()
    return {line.strip() for line in text.splitlines() if line.strip()}


def _check_scope(root: Path, tenants: list[Path], key_rel: str, scope: str) -> list[Finding]:
    """``conversation_erased`` or ``scope_key_missing`` for the scope a ``KEY`` file names."""
    name = _scope_file(scope)
    for tenant in tenants:
        if (tenant / _TOMBSTONES / name).is_file() or scope in _revoked(tenant):
            return [
                Finding(
                    FindingCode.CONVERSATION_ERASED,
                    Severity.INFO,
                    key_rel,
                    f"scope {scope} was destroyed (crypto-shred): its frames verify and can no longer be "
                    "decrypted, an erased conversation, not damage",
                    actual=scope,
                )
            ]
        if (tenant / _SCOPE_KEYS / name).is_file():
            return []
    where = ", ".join(f"{t.relative_to(root).as_posix()}/{_SCOPE_KEYS}/{name}" for t in tenants) or "tenants/"
    return [
        Finding(
            FindingCode.SCOPE_KEY_MISSING,
            Severity.ERROR,
            key_rel,
            f"KEY names scope {scope}, which has no wrapped key and no tombstone ({where}): its frames "
            "cannot be decrypted by anyone",
            expected=where,
            actual=scope,
        )
    ]


def _check_objects(root: Path, tenant: Path) -> list[Finding]:
    """Object bodies without any grant, and grant directories without a body."""
    objects: set[str] = set()
    obj_dir = tenant / _OBJECTS
    if obj_dir.is_dir():
        for fan in sorted(obj_dir.iterdir()):
            if fan.is_dir() and not fan.is_symlink():
                objects.update(fan.name + p.name for p in fan.iterdir() if p.is_file())
    granted: dict[str, int] = {}
    grant_dir = tenant / _GRANTS
    if grant_dir.is_dir():
        for d in sorted(grant_dir.iterdir()):
            if d.is_dir() and not d.is_symlink():
                granted[d.name] = sum(1 for p in d.iterdir() if p.is_file())
    t = tenant.relative_to(root).as_posix()
    out: list[Finding] = []
    for oid in sorted(objects):
        if granted.get(oid, 0) == 0:
            out.append(
                Finding(
                    FindingCode.OBJECT_WITHOUT_GRANT,
                    Severity.WARNING,
                    f"{t}/{_OBJECTS}/{oid[:2]}/{oid[2:]}",
                    "object has no grant: no scope can read it (garbage collection removes it)",
                    entry_id=oid,
                )
            )
    for oid in sorted(granted):
        if oid not in objects:
            out.append(
                Finding(
                    FindingCode.GRANT_WITHOUT_OBJECT,
                    Severity.WARNING,
                    f"{t}/{_GRANTS}/{oid}",
                    f"{granted[oid]} grant(s) for an object whose body is missing",
                    entry_id=oid,
                )
            )
    return out
