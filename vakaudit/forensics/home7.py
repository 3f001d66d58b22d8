"""Verify what a 7.0 data-baseline home adds: segment directories, scope keys, objects and refs.

Keyless by default, like vak's own ``vak data verify`` but further (baseline7.md §12.1): every
segment directory of the home (session ledgers and record chains) is read by
:func:`vakaudit.storage.iter_segments`, whose frame and segment findings (bad link, bad length,
torn tail, seal mismatch, discontinuity, gaps versus retention drops, ``.sealing`` leftovers) are
passed on as they are. On top, per home:

- each ``KEY`` is resolved by the tenant's key reader (:meth:`vakaudit.storage.TenantKeys.chain_key`):
  a destroyed or revoked scope is an erased conversation (``scope_erased``, info: its frames
  verify and can never be read, by design), a scope with no key file ``scope_key_missing``;
- an object body with no grant, a grant directory with no body, and a ``doc/`` ref whose version
  object is missing are ``object_without_grant``, ``grant_without_object`` and
  ``ref_target_missing``.

With a :class:`~vakaudit.storage.KeyRing`, sealed frames are opened (a frame that does not open
under its scope's key is damage) and every object is opened through one of its grants, which
checks its id against its content when the ring holds the id key (``object_id_mismatch``). Never
writes, locks or repairs anything; ``refs.db`` is read from a private copy by the storage package.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from vakaudit.errors import ObjectUnavailableError
from vakaudit.findings import Finding, FindingCode
from vakaudit.ledger.policy import severity_of
from vakaudit.scan.store7 import chain_key as _chain_key
from vakaudit.scan.store7 import tenant_dirs
from vakaudit.scan.walk import HomeFile
from vakaudit.storage import TenantKeys, iter_segments
from vakaudit.storage.segments import KEY

if TYPE_CHECKING:
    from vakaudit.storage import KeyRing

__all__ = ["Home7Report", "segment_dirs", "tenant_dirs", "verify_home7"]


@dataclass(slots=True)
class Home7Report:
    """What :func:`verify_home7` checked and found."""

    segment_dirs: int = 0
    segments: int = 0
    frames: int = 0
    bytes_verified: int = 0
    objects: int = 0
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
    root: Path,
    files: list[HomeFile],
    *,
    keys: KeyRing | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> Home7Report:
    """Verify the segment directories, scope keys, objects and refs of the 7.0 home at ``root``."""
    report = Home7Report()
    sizes: dict[str, int] = {}
    for hf in files:
        if "/" in hf.rel_path:
            parent = hf.rel_path.rsplit("/", 1)[0]
            sizes[parent] = sizes.get(parent, 0) + hf.size_bytes
    tenants = [
        (t, TenantKeys(t / "keys", keys, rel_dir=f"{t.relative_to(root).as_posix()}/keys"))
        for t in tenant_dirs(root)
    ]
    dirs = segment_dirs(files)
    # the keys first, in this thread (the tenants' key readers collect their findings in order)
    work = [(root / rel_dir, rel_dir, _chain_key(root / rel_dir, rel_dir, tenants)) for rel_dir in dirs]
    # a conversation's frames are sealed (its directory has a KEY): walked without its key, they are
    # hashed and counted, never decoded in Python
    sealed = {hf.rel_path.rpartition("/")[0] for hf in files if hf.rel_path.endswith("/" + KEY)}
    hashed = {rel_dir for _d, rel_dir, key in work if key is None and rel_dir in sealed}
    for rel_dir, (segments, frames, size, found) in zip(dirs, _walk_all(work, sizes, hashed), strict=True):
        if progress is not None:
            progress(rel_dir, sizes.get(rel_dir, 0))
        report.segment_dirs += 1
        report.segments += segments
        report.frames += frames
        report.bytes_verified += size
        report.findings.extend(found)  # the segment checks and every segment's chain findings
    for tenant, tkeys in tenants:
        report.findings.extend(tkeys.findings)
        if (tenant / "store").is_dir():
            report.findings.extend(_check_store(root, tenant / "store", keys, report, files))
    return report


#: below this many bytes in the directories whose walk only hashes, every directory is walked in
#: this thread (a thread costs more than it saves)
THREAD_MIN_BYTES = 1 << 20


def _walk_one(item: tuple[Path, str, bytes | None]) -> tuple[int, int, int, list[Finding]]:
    """One segment directory's walk: (segments, frames, bytes, findings)."""
    directory, rel_dir, key = item
    walk = iter_segments(directory, key, rel_dir=rel_dir)
    for _segment, _frames in walk:
        pass  # the walk verifies each segment as the next one is taken
    return (len(walk.segments), sum(s.chain.entries for s in walk.segments),
            sum(s.size_bytes for s in walk.segments), walk.findings)


def _walk_all(work: list[tuple[Path, str, bytes | None]], sizes: dict[str, int],
              hashed: set[str]) -> Iterator[tuple[int, int, int, list[Finding]]]:
    """Every directory's walk, in the order given (``sizes``: bytes per directory).

    The walks of the ``hashed`` directories (sealed frames walked without their key) are mostly the
    compiled walk's reading and hashing, without the GIL: with at least :data:`THREAD_MIN_BYTES` of
    them, one helper thread per further core (at most 3) takes the largest of them left, again and
    again. This thread walks the other directories (their frames are decoded in Python, which a
    second thread only slows down: a keyed pass by 8% on bench's 7.0 home, 23% on the synthetic
    measured one), then takes the smallest hashed ones left. Each result is given as soon as those before it are; the results are the same
    whatever the number of threads (a walk's exception is raised here, in its turn)."""
    threads = min(4, os.cpu_count() or 1)
    size = [sizes.get(rel, 0) for _d, rel, _k in work]
    shared = sorted((i for i, (_d, rel, _k) in enumerate(work) if rel in hashed), key=size.__getitem__)
    if threads < 2 or len(shared) < 2 or sum(size[i] for i in shared) < THREAD_MIN_BYTES:
        yield from map(_walk_one, work)
        return
    todo = deque(shared)  # smallest first
    own = deque(i for i, (_d, rel, _k) in enumerate(work) if rel not in hashed)
    done: list[tuple | BaseException | None] = [None] * len(work)
    ready = threading.Condition()

    def take(helper: bool) -> bool:
        """Walk the next directory: a helper the largest hashed one left, this thread its own ones, then
        the smallest hashed one left. False when none is left."""
        try:
            i = todo.pop() if helper else own.popleft() if own else todo.popleft()  # atomic each
        except IndexError:
            return False
        try:
            result: tuple | BaseException = _walk_one(work[i])
        except BaseException as exc:  # noqa: BLE001 - raised by the caller's thread, in its turn
            result = exc
        with ready:
            done[i] = result
            ready.notify_all()
        return True

    def helper() -> None:
        while take(helper=True):
            pass

    def result(i: int) -> tuple[int, int, int, list[Finding]]:
        got = done[i]
        if isinstance(got, BaseException):
            raise got
        assert got is not None
        return got

    helpers = [threading.Thread(target=helper, name=f"vakaudit-walk-{n}", daemon=True) for n in range(threads - 1)]
    given = 0
    try:
        for t in helpers:
            t.start()
        while take(helper=False):
            while given < len(work) and done[given] is not None:
                yield result(given)
                given += 1
        for i in range(given, len(work)):
            with ready:
                ready.wait_for(lambda i=i: done[i] is not None)
            yield result(i)
    finally:
        todo.clear()  # stopped early: the helpers take nothing more
        own.clear()
        for t in helpers:
            t.join()


def _check_store(root: Path, store_dir: Path, keys: KeyRing | None, report: Home7Report,
                 files: list[HomeFile] | None = None) -> list[Finding]:
    """Objects without grants, grants without objects, ``doc/`` refs to missing objects; unlocked:
    every object opened through one of its grants (its id checked against its content). ``files``:
    the walk, whose listing of the store is used instead of listing it again."""
    # the store's readers only for a home that has a store (a home of conversations has none)
    from vakaudit.scan.store7 import store_listing
    from vakaudit.storage import Store
    from vakaudit.storage.documents import DOC_PREFIX, FORGOTTEN
    from vakaudit.storage.objects import is_object_id, object_rel_path

    rel = store_dir.relative_to(root).as_posix()
    store = Store(store_dir, keys, rel_dir=rel, listing=store_listing(files, rel))
    objects = store.object_ids()
    present = set(objects)
    report.objects += len(objects)
    out: list[Finding] = []
    for oid in objects:
        scopes = store.grants(oid)
        if not scopes:
            out.append(
                Finding(
                    FindingCode.OBJECT_WITHOUT_GRANT,
                    severity_of(FindingCode.OBJECT_WITHOUT_GRANT),
                    f"{rel}/{object_rel_path(oid)}",
                    "object has no grant: no scope can read it (garbage collection removes it)",
                    entry_id=oid,
                )
            )
        elif keys is not None:
            for scope in scopes:
                try:
                    store.object(oid, scope)
                    break
                except ObjectUnavailableError:
                    continue
    for oid in store.granted_ids():
        if oid not in present:
            out.append(
                Finding(
                    FindingCode.GRANT_WITHOUT_OBJECT,
                    severity_of(FindingCode.GRANT_WITHOUT_OBJECT),
                    f"{rel}/cas/grants/{oid}",
                    f"{len(store.grants(oid))} grant(s) for an object whose body is missing",
                    entry_id=oid,
                )
            )
    if (store_dir / "refs.db").is_file():
        for name, _generation, _epoch, target in store.refs():
            if not name.startswith(DOC_PREFIX) or target == FORGOTTEN:
                continue
            text = target.decode("ascii", "replace")
            if not is_object_id(text) or text not in present:
                out.append(
                    Finding(
                        FindingCode.REF_TARGET_MISSING,
                        severity_of(FindingCode.REF_TARGET_MISSING),
                        f"{rel}/refs.db",
                        f"ref {name} points at object {text}, which is not in the store",
                        entry_id=name,
                        expected=f"{rel}/{object_rel_path(text)}" if is_object_id(text) else None,
                        actual=text,
                    )
                )
    out.extend(store.findings)
    return out
