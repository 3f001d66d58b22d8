"""Every public function that takes a path accepts ``str | os.PathLike`` and expands ``~``.

The public functions are enumerated from ``vakaudit.__all__`` and the ``__all__`` of its
subpackages (a parameter annotated with a path type takes a path); each is called below with a
``~`` path while ``HOME`` is a temporary folder holding a copy of the tiny home. A public function
taking a path that has no call here fails the first test.
"""

from __future__ import annotations

import importlib
import inspect
import io
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import vakaudit

PACKAGES = ["vakaudit", "vakaudit.ledger", "vakaudit.scan", "vakaudit.analyze", "vakaudit.forensics",
            "vakaudit.replay", "vakaudit.synth", "vakaudit.report", "vakaudit.outputs"]  # fmt: skip
LEDGER = "h/agents/vak/sessions/0d994828fe15217e"


def _path_functions() -> set[str]:
    names = set()
    for pkg in PACKAGES:
        mod = importlib.import_module(pkg)
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            members = [(name, obj)]
            if inspect.isclass(obj):
                members = [
                    (f"{name}.{attr}", getattr(obj, attr)) for attr in vars(obj) if not attr.startswith("_")
                ]
            for qual, fn in members:
                if not callable(fn):
                    continue
                try:
                    params = inspect.signature(fn).parameters.values()
                except (TypeError, ValueError):
                    continue
                if any("Path" in str(p.annotation) for p in params):
                    names.add(qual)
    return names


@pytest.fixture
def tilde(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME is ``tmp_path``, which holds ``h`` (a tiny home copy), ``s`` (its scan) and ``l.jsonl``."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)  # a path taken literally would create a folder named "~" here
    monkeypatch.delenv("VAK_HOME", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    shutil.copytree(
        Path(__file__).resolve().parent.parent / "sample_homes" / "tiny", tmp_path / "h", symlinks=True
    )
    ledger = next((tmp_path / LEDGER).glob("*.jsonl"))
    shutil.copy(ledger, tmp_path / "l.jsonl")
    vakaudit.scan_home(str(tmp_path / "h"), out=str(tmp_path / "s"), jobs=1)
    return tmp_path


def _ledger_name(root: Path) -> str:
    return "~/" + str(next((root / LEDGER).glob("*.jsonl")).relative_to(root))


def _calls(root: Path) -> dict[str, Callable[[], Any]]:
    from vakaudit import analyze as an
    from vakaudit import forensics as fo
    from vakaudit import ledger as le
    from vakaudit import outputs as ou
    from vakaudit import replay as rp
    from vakaudit import report as rep
    from vakaudit import scan as sc
    from vakaudit import synth as sy

    led = _ledger_name(root)
    seal = fo.seal_home(root / "h")
    log = le.SessionLog.open_read_only(root / led[2:])
    calls: dict[str, Callable[[], Any]] = {
        "SessionLog.open_read_only": lambda: le.SessionLog.open_read_only(led).entries,
        "SessionLog.open": lambda: le.SessionLog.open("~/l.jsonl").close(),
        "SessionLog.create": lambda: le.SessionLog.create(
            "~/new/sessions/k/n.jsonl", dict(log.header.payload)
        ).close(),
        "SessionLog.reconcile_running_work": lambda: le.SessionLog.open("~/l.jsonl").reconcile_running_work(
            sessions_home="~/h/agents/vak"
        ),
        "workspace_key": lambda: le.workspace_key(root / "p"),  # hashes the recorded path as given
        "session_path": lambda: (
            le.session_path("~/h", root / "p", "x") == le.session_path(root / "h", root / "p", "x")
            or _fail("session_path")
        ),
        "agent_sessions_home": lambda: (
            le.agent_sessions_home("~/h") == le.agent_sessions_home(root / "h")
            or _fail("agent_sessions_home")
        ),
        "scan_home": lambda: sc.scan_home("~/h", out="~/s2", jobs=1),
        "resolve_home": lambda: sc.resolve_home("~/h") == root / "h" or _fail("resolve_home"),
        "has_tenants_tree": lambda: (
            sc.has_tenants_tree("~/h") == sc.has_tenants_tree(root / "h") or _fail("has_tenants_tree")
        ),
        "detect_layout": lambda: sc.detect_layout("~/h"),
        "iter_home_files": lambda: next(iter(sc.iter_home_files("~/h"))),
        "ledger_kind_bytes": lambda: sc.ledger_kind_bytes("~/h"),
        "default_out": lambda: sc.default_out("~/h") == sc.default_out(root / "h") or _fail("default_out"),
        "open_scan": lambda: (sc.open_scan("~/s"), an.open_scan("~/s").close()),
        "analyze": lambda: an.analyze("~/s"),
        "scan_home_of": lambda: an.scan_home_of("~/s") == root / "h" or _fail("scan_home_of"),
        "verify_home": lambda: fo.verify_home("~/h", cross=False),
        "verify_ledger": lambda: list(fo.verify_ledger(led)),
        "seal_home": lambda: fo.seal_home("~/h"),
        "seal_file": lambda: fo.seal_file(led, "l.jsonl"),
        "verify_since": lambda: fo.verify_since("~/h", seal),
        "write_seal": lambda: fo.write_seal(seal, "~/out/seal.json", "~/h"),
        "read_seal": lambda: (fo.write_seal(seal, "~/seal.json"), fo.read_seal("~/seal.json")),
        "build_timeline": lambda: fo.build_timeline("~/h"),
        "write_timeline": lambda: fo.write_timeline(fo.build_timeline("~/h"), "~/out/t.jsonl", home="~/h"),
        "iter_requests": lambda: next(iter(rp.iter_requests(led))),
        "iter_ledger_paths": lambda: list(rp.iter_ledger_paths("~/h")) or _fail("no ledgers"),
        "is_v7_home": lambda: rp.is_v7_home(_v7(root)) or _fail("is_v7_home"),
        "conversation_dirs": lambda: list(rp.conversation_dirs(_v7(root))) or _fail("no 7.0 ledgers"),
        "open_v7_ledger": lambda: rp.open_v7_ledger(_v7(root), next(rp.conversation_dirs(_v7(root))), None).frames
        or _fail("no frames"),
        "SessionLog.read_only_from": lambda: le.SessionLog.read_only_from("~/l7", io.BytesIO(b"")).path == root / "l7"
        or _fail("read_only_from"),
        "build_home": lambda: sy.build_home("~/synth", turns=2, fsync=False),
        "build_one_session": lambda: sy.build_one_session("~/one"),
        "StoreWriter.import_session": lambda: _import_session(root, led),
        "build_report": lambda: rep.build_report("~/s", out="~/out/r.md", format="md"),
        "load_inputs": lambda: rep.load_inputs("~/s").con.close(),
        "check_output": lambda: ou.check_output("~/x", "~/h") == root / "x" or _fail("check_output"),
        "is_stdout": lambda: ou.is_stdout("~/x") and _fail("is_stdout"),
        "open_output": lambda: ou.open_output("~/out/o.bin").__enter__().close(),
        "write_output": lambda: ou.write_output("~/out/w.txt", "x"),
    }
    return calls


def _v7(root: Path) -> str:
    """``~/h7``: a copy of the sample 7.0 home (made on first use)."""
    if not (root / "h7").exists():
        shutil.copytree(Path(__file__).resolve().parent.parent / "sample_homes" / "v7", root / "h7", symlinks=True)
    return "~/h7"


def _import_session(root: Path, led: str) -> None:
    from vakaudit.synth import StoreWriter

    writer = StoreWriter("~/store-cache")
    writer.import_session(led, "0" * 16)
    writer.close()


def _fail(what: str) -> None:
    raise AssertionError(f"{what}: a ~ path gave another answer than the expanded path")


def test_every_public_function_taking_a_path_is_called_here(tilde: Path) -> None:
    assert _path_functions() - set(_calls(tilde)) == set()


def test_every_public_function_expands_tilde(tilde: Path) -> None:
    failed = {}
    for name, call in sorted(_calls(tilde).items()):
        try:
            call()
        except Exception as exc:  # noqa: BLE001 - collect every function that fails
            failed[name] = f"{type(exc).__name__}: {exc}"
    assert failed == {}
    # nothing was created in a folder literally named "~"
    assert not any(p.name == "~" for p in tilde.rglob("*"))
    assert os.path.isdir(tilde / "out")
