"""Key material never reaches any output of a command run with ``--keys`` on a 7.0 home.

Every key of the sample home (its KEK, its object id key, each conversation's scope key, the
credential store's file key and the vak key file's passphrase) is looked for, as lowercase and
uppercase hex and as raw bytes, in stdout, stderr and every file the commands wrote (``scan --keys``'s
Parquet tables and manifest among them), for each way
of unlocking: vakaudit's JSON key file, vak's passphrase-sealed key file and ``--keys home`` (vak's
file credential store, in a copy of the home).
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vakaudit.cli import app
from vakaudit.storage.keys import LOCAL_TENANT
from vakaudit.storage.tenant_writer import write_credential_store, write_vak_key_file

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_homes"
PASSPHRASE = "correct horse battery staple"


def _make_module():
    spec = importlib.util.spec_from_file_location("make_v7", SAMPLES / "make_v7.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["make_v7"] = mod
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.modules.pop("make_v7", None)
    return mod


def _secrets(mod, tmp: Path) -> list[bytes]:  # noqa: ANN001 - the make_v7 module
    facts = mod.build(tmp / "rebuilt", turns=3)  # the sample home's scope keys, as make_v7 made them
    assert (tmp / "rebuilt" / mod.T / "keys/scopes/keys").is_dir()
    return [mod.KEK0, mod.ID_KEY, *facts.keys.values()]


def _leaks(blobs: list[bytes], secrets: list[bytes]) -> list[str]:
    found = []
    for s in secrets:
        forms = (s, s.hex().encode(), s.hex().upper().encode())
        for b in blobs:
            for form in forms:
                if form in b:
                    found.append(f"{s.hex()[:8]}… as {'raw' if form is s else 'hex'}")
    return found


@pytest.mark.parametrize("how", ["json", "vak-key-file", "home"])
def test_no_key_in_any_output(how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mod = _make_module()
    secrets = _secrets(mod, tmp_path)
    home = tmp_path / "home"
    shutil.copytree(SAMPLES / "v7", home)
    if how == "json":
        keys = str(SAMPLES / "v7-keys.json")
    elif how == "vak-key-file":
        keys = str(tmp_path / "vakyartha.key")
        write_vak_key_file(Path(keys), PASSPHRASE, id_key=mod.ID_KEY, signing_key=bytes(48), keks=[mod.KEK0],
                           salt=bytes(16), nonce=bytes(12), iterations=100_000)  # fmt: skip
        monkeypatch.setenv("VAKAUDIT_KEY_PASSPHRASE", PASSPHRASE)
        secrets.append(PASSPHRASE.encode())
    else:
        file_key = bytes([7]) * 32
        scope = f"home-0000000000000000-tenant-{LOCAL_TENANT}-keys"
        write_credential_store(home, [(scope, "VAK_TENANT_KEK_0", mod.KEK0.hex()),
                                      (scope, "VAK_TENANT_KEK_CURRENT", "0"),
                                      (scope, "VAK_TENANT_OBJECT_ID_KEY", mod.ID_KEY.hex())],
                               file_key, bytes(12))  # fmt: skip
        secrets.append(file_key)
        keys = "home"
    out = tmp_path / "out"  # every file the commands write goes here
    out.mkdir()
    runner = CliRunner()
    blobs: list[bytes] = []
    for args in (
        ["verify", str(home), "--keys", keys],
        ["verify", str(home), "--keys", keys, "--json"],
        ["seal", str(home), "-o", str(out / "seal.json")],
        ["timeline", str(home), "-o", str(out / "timeline.jsonl")],
        ["scan", str(home), "--out", str(out / "scan"), "--quiet"],
        ["scan", str(home), "--out", str(out / "scan-unlocked"), "--keys", keys, "--json"],
        ["scan", str(home), "--out", str(out / "scan-unlocked"), "--keys", keys],  # the incremental rescan
        ["verify", str(SAMPLES / "broken7/frame_undecryptable/home") if how != "home" else str(home),
         "--keys", keys, "--json"],
    ):
        res = runner.invoke(app, args)
        assert res.exit_code in (0, 1), (args, res.output[-1000:])
        blobs += [res.stdout_bytes, res.stderr_bytes]
    assert "frames verified" in runner.invoke(app, ["verify", str(home), "--keys", keys]).stdout
    # the unlocked scan did open the Document (its content size is only known with the keys), and
    # its Parquet tables and manifest are among the outputs searched below
    import pyarrow.parquet as pq

    docs = pq.read_table(out / "scan-unlocked" / "documents" / "all.parquet").to_pylist()
    assert [d["content_bytes"] for d in docs] == [len(b"# Note\nuse tabs\n")]
    assert (out / "scan-unlocked" / "manifest.json").is_file()
    # a wrong passphrase fails with one line that holds no key either
    if how == "vak-key-file":
        monkeypatch.setenv("VAKAUDIT_KEY_PASSPHRASE", "wrong passphrase entirely")
        res = runner.invoke(app, ["verify", str(home), "--keys", keys])
        assert res.exit_code == 2
        blobs += [res.stdout_bytes, res.stderr_bytes]
    blobs += [p.read_bytes() for p in out.rglob("*") if p.is_file()]
    assert _leaks(blobs, secrets) == []
