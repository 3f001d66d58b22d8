"""Walk a vak home: every file to exactly one artifact kind, with its stat and walk findings.

The walk never follows a symlink (inside or outside the home), never opens a secret file, never
opens a FIFO, and never writes. It probes readability of regular files with a read-only open (no
read). Reusable on its own: :func:`iter_home_files` and :func:`detect_layout` are what ``verify``
builds on.
"""

from __future__ import annotations

import errno
import os
import stat as stat_mod
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from vakaudit.artifacts import UNCLASSIFIED, ArtifactKind, classify
from vakaudit.findings import Finding, FindingCode, Severity
from vakaudit.names import shown
from vakaudit.scan.paths import default_home, open_read_only, resolve_home

__all__ = [
    "HomeFile",
    "default_home",
    "detect_layout",
    "has_tenants_tree",
    "home_scope_of",
    "iter_home_files",
    "open_read_only",
    "resolve_home",
]


def _file_type(mode: int) -> str:
    if stat_mod.S_ISREG(mode):
        return "file"
    if stat_mod.S_ISLNK(mode):
        return "symlink"
    if stat_mod.S_ISSOCK(mode):
        return "socket"
    if stat_mod.S_ISFIFO(mode):
        return "fifo"
    if stat_mod.S_ISCHR(mode) or stat_mod.S_ISBLK(mode):
        return "device"
    return "other"


@dataclass(frozen=True, slots=True)
class HomeFile:
    """One non-directory entry of a home, as the walk saw it."""

    rel_path: str  # POSIX, relative to the home; a name that is not UTF-8 as os.fsdecode gives it
    kind: ArtifactKind
    file_type: str  # file | symlink | socket | fifo | device | other
    size_bytes: int  # lstat size (a symlink counts its own bytes, never its target's)
    allocated_bytes: int  # st_blocks * 512
    mtime_ns: int
    inode: int
    device: int
    home_scope: str  # the agent home holding it: "" or "agents/vak" (or deeper: D2)
    session_id: str | None
    readable: bool  # a read-only open succeeded (False for secrets, symlinks, specials)
    findings: tuple[Finding, ...] = field(default=())

    @property
    def should_read(self) -> bool:
        """True when the engine runs the kind's reader on it."""
        return self.readable and self.kind.reads(self.rel_path)


def home_scope_of(rel_path: str) -> str:
    """The agent home a path sits in: the longest leading run of ``agents/<id>/`` pairs, as tables
    show it (:func:`vakaudit.names.shown`: an agent id that is not UTF-8 is escaped)."""
    parts = rel_path.split("/")[:-1]
    n = 0
    while n + 1 < len(parts) and parts[n] == "agents":
        n += 2
    return shown("/".join(parts[:n]))


def _inside(target: str, root: str) -> bool:
    return target == root or target.startswith(root.rstrip("/") + "/")


def has_tenants_tree(home: str | os.PathLike[str]) -> bool:
    """True when ``home`` holds a ``tenants/`` directory (not a symlink): what marks a data home as
    written at or after vak's 7.0 data baseline (baseline7.md §1.4, layout g3)."""
    tenants = Path(os.fspath(home)).expanduser() / "tenants"
    return tenants.is_dir() and not tenants.is_symlink()


def detect_layout(home: str | os.PathLike[str], files: list[HomeFile] | None = None) -> str:
    """The on-disk layout generation of a home (home.md §0.1): ``"g1"``, ``"g2"`` or ``"g3"``.

    ``tenants/`` present -> g3. Else any row of a side ledger (a JSONL file its kind's reader reads,
    not a resumable kind's: a session ledger's lines carry no trace) carrying a top-level
    ``"trace"`` key -> g2 (only the first 64 KiB of each side ledger are looked at). Else g1.
    ``files``: a walk already made of this home (saves a second walk).
    """
    import orjson

    root = Path(home)
    if has_tenants_tree(root):
        return "g3"
    for hf in files if files is not None else iter_home_files(root, layout="g1"):
        kind = hf.kind
        if not hf.readable or kind.name == UNCLASSIFIED or kind.reader is None or kind.resumable is not None:
            continue
        if not hf.rel_path.endswith(".jsonl"):
            continue
        try:
            fd = open_read_only(root / hf.rel_path)
        except OSError:
            continue
        try:
            head = os.read(fd, 65_536)
        finally:
            os.close(fd)
        for line in head.split(b"\n"):
            if b'"trace"' not in line:
                continue
            try:
                row = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(row, dict) and isinstance(row.get("trace"), dict):
                return "g2"
    return "g1"


def iter_home_files(home: str | os.PathLike[str], *, layout: str | None = None) -> Iterator[HomeFile]:
    """Every non-directory entry under ``home``, depth first in sorted name order, classified.

    Findings ride on the file they concern: ``undeclared_file``, ``symlink_outside_home``,
    ``unreadable_file``, ``secret_file``, ``nested_home`` (once per nested agent home). A directory
    that cannot be listed gives an ``unreadable_file`` finding on a pseudo file of kind
    ``unclassified`` with size 0, and the walk goes on. ``layout`` (detected when not given) decides
    which patterns classify: a JSONL-era home's files are never matched by a kind's 7.0 paths.
    """
    root = os.path.abspath(os.fspath(home))
    layout = layout or detect_layout(root)
    real_root = os.path.realpath(root)
    seen_nested: set[str] = set()
    yield from _walk_dir(root, "", real_root, layout, seen_nested)


def _walk_dir(
    abs_dir: str, rel_dir: str, real_root: str, layout: str | None, seen_nested: set[str]
) -> Iterator[HomeFile]:
    # one generator for the whole tree, with a stack of directory listings (a recursive generator
    # resumes every frame above a file for each file it yields)
    # each listing with the home scope of the files in it (held only while the listing is open)
    stack: list[tuple[Iterator[tuple[str, str, os.DirEntry[str] | None]], str | None]] = [
        (iter([(abs_dir, rel_dir, None)]), None)
    ]
    while stack:
        listing, scope = stack[-1]
        item = next(listing, None)
        if item is None:
            stack.pop()
            continue
        path, rel, entry = item
        if entry is None:  # a directory to list
            try:
                with os.scandir(path) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError as exc:
                rel = rel or "."
                yield _unreadable(rel, layout, home_scope_of(rel + "/x"),
                                  f"directory cannot be listed: {exc.strerror or exc}")
                continue
            stack.append((iter([(e.path, f"{rel}/{e.name}" if rel else e.name, e) for e in entries]),
                          home_scope_of(f"{rel}/x")))
            continue
        try:
            if entry.is_dir(follow_symlinks=False):  # the type comes with the listing: no stat
                stack.append((iter([(path, rel, None)]), None))
                continue
            st = entry.stat(follow_symlinks=False)
        except OSError as exc:
            yield _unreadable(rel, layout, home_scope_of(rel),
                              f"cannot stat: {exc.strerror or exc} (vanished during the scan?)")
            continue
        if stat_mod.S_ISDIR(st.st_mode):  # a directory the listing did not type
            stack.append((iter([(path, rel, None)]), None))
            continue
        yield _home_file(path, rel, st, real_root, layout, seen_nested, scope)


def _unreadable(rel: str, layout: str | None, scope: str, message: str) -> HomeFile:
    """A pseudo file (size 0, not readable) for an entry the walk could not list or stat."""
    return HomeFile(rel, classify(rel, layout), "other", 0, 0, 0, 0, 0, scope, None, False,
                    (Finding(FindingCode.UNREADABLE_FILE, Severity.ERROR, rel, message),))


def _home_file(
    path: str, rel: str, st: os.stat_result, real_root: str, layout: str | None, seen_nested: set[str],
    scope: str | None = None,
) -> HomeFile:
    kind = classify(rel, layout)
    ftype = _file_type(st.st_mode)
    if scope is None:
        scope = home_scope_of(rel)
    findings: list[Finding] = []
    if scope.count("/") >= 3 and scope not in seen_nested:
        seen_nested.add(scope)
        findings.append(
            Finding(
                FindingCode.NESTED_HOME,
                Severity.WARNING,
                scope,
                f"nested agent home {scope}/ (known defect D2): artifacts below it are counted "
                "under their own scope",
            )
        )
    readable = False
    if kind.name == UNCLASSIFIED:
        findings.append(
            Finding(FindingCode.UNDECLARED_FILE, Severity.WARNING, rel, "file matches no declared artifact kind")
        )
    if ftype == "symlink":
        try:
            target = os.readlink(path)
        except OSError:
            target = ""
        resolved = os.path.realpath(path)
        try:
            os.stat(path)  # resolves the link without opening anything: a loop or dangling target fails
            broken = None
        except OSError as exc:
            broken = "a symlink loop" if exc.errno == errno.ELOOP else "its target does not exist"
        if broken is not None and (broken != "its target does not exist" or _inside(resolved, real_root)):
            findings.append(
                Finding(
                    FindingCode.SYMLINK_UNRESOLVABLE,
                    Severity.WARNING,
                    rel,
                    f"symlink cannot be resolved ({broken}); not followed",
                    actual=target or None,
                )
            )
        elif not _inside(resolved, real_root):
            findings.append(
                Finding(
                    FindingCode.SYMLINK_OUTSIDE_HOME,
                    Severity.WARNING,
                    rel,
                    "symlink points outside the home; not followed",
                    actual=target or None,
                )
            )
    elif kind.secret:
        findings.append(
            Finding(FindingCode.SECRET_FILE, Severity.INFO, rel, "secret file: sized, never opened")
        )
    elif ftype == "file" or (ftype == "socket" and kind.reader is not None):
        try:
            fd = open_read_only(path)
        except OSError as exc:
            reason = errno.errorcode.get(exc.errno or 0, "error")
            findings.append(
                Finding(
                    FindingCode.UNREADABLE_FILE,
                    Severity.ERROR,
                    rel,
                    f"cannot open for reading: {exc.strerror or exc} ({reason})",
                )
            )
        else:
            os.close(fd)
            readable = ftype == "file"
    elif kind.reader is not None:
        findings.append(
            Finding(
                FindingCode.UNREADABLE_FILE, Severity.ERROR, rel, f"not a regular file ({ftype}); not opened"
            )
        )
    sid = None
    if kind.session_id_of is not None:
        try:
            sid = kind.session_id_of(rel)
            sid = None if sid is None else shown(sid)  # an id from a name that is not UTF-8: escaped
        except (ValueError, IndexError):
            sid = None
    return HomeFile(
        rel_path=rel,
        kind=kind,
        file_type=ftype,
        size_bytes=st.st_size,
        allocated_bytes=getattr(st, "st_blocks", 0) * 512,
        mtime_ns=st.st_mtime_ns,
        inode=st.st_ino,
        device=st.st_dev,
        home_scope=scope,
        session_id=sid,
        readable=readable,
        findings=tuple(findings),
    )
