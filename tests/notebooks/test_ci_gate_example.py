"""examples/ci-gate.sh, run as CI would run it: a real bash subprocess calling the real vakaudit CLI.

Exit codes asserted are the ones docs/ci-gates.md and the script's header document; the homes that
fail do so for the reason their README line names (or a forgery made here by hand).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vakaudit import SessionLog

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "examples" / "ci-gate.sh"
BASELINE = REPO / "examples" / "ci-baseline-tiny.json"


def gate(*args: str | Path, vakaudit: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, VAKAUDIT=vakaudit or f"{sys.executable} -m vakaudit", PYTHON=sys.executable)
    return subprocess.run(
        ["bash", str(SCRIPT), *map(str, args)], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )


def _ledger(home: Path) -> Path:
    (p,) = sorted(q for q in home.rglob("*.jsonl") if "sessions" in q.relative_to(home).parts)
    return p


def test_tiny_sample_home_passes_every_gate_against_the_committed_baseline(
    sample_homes: Path, tmp_path
) -> None:
    home = sample_homes / "tiny"
    r = gate(home, "--baseline", BASELINE, "--work", tmp_path / "work")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == "ci-gate: pass"
    assert "analyze ok" in r.stdout
    # the committed baseline agrees with the home measured without vakaudit
    base = json.loads(BASELINE.read_text(encoding="utf-8"))["headline"]
    ledgers = [p for p in home.rglob("*.jsonl") if "sessions" in p.relative_to(home).parts]
    assert base["sessions"] == len(ledgers)
    assert base["ledger_bytes"] == sum(p.stat().st_size for p in ledgers)
    assert base["entries"] == sum(p.read_bytes().count(b"\n") for p in ledgers)
    # the reports went to --work, nothing into the home
    assert {"verify.json", "replay.json", "analyze.json"} <= {p.name for p in (tmp_path / "work").iterdir()}
    assert not any(p.name in ("verify.json", "replay.json") for p in home.rglob("*"))


def test_tampered_home_fails_verify_with_exit_1_naming_the_line(sample_homes: Path) -> None:
    home_dir = sample_homes / "broken" / "payload_byte_changed"
    readme = (home_dir / "README.md").read_text(encoding="utf-8")
    assert "line_modified (line 2)" in readme
    r = gate(home_dir / "home")
    assert r.returncode == 1
    assert re.search(r"verify: error line_modified \S+s-sample\.jsonl:2:", r.stderr)
    assert "replay ok" not in r.stdout  # the first failing gate stops the run


def test_torn_last_line_passes_by_default_and_fails_under_strict(sample_homes: Path) -> None:
    # README: torn_last_line; verify --help: a warning under tolerate-tail, an error under strict
    home = sample_homes / "broken" / "torn_last_line" / "home"
    assert gate(home).returncode == 0
    r = gate(home, "--torn", "strict")
    assert r.returncode == 1
    assert "torn_last_line" in r.stderr


def test_usage_errors_exit_2(sample_homes: Path, tmp_path) -> None:
    assert gate(tmp_path / "missing").returncode == 2
    assert gate(sample_homes / "tiny", "--baseline", tmp_path / "missing.json").returncode == 2
    r = gate(sample_homes / "broken" / "clean" / "home", "--fail-on", "sometimes")  # vakaudit's own exit 2
    assert r.returncode == 2


def test_seal_then_append_passes_and_a_truncated_sealed_file_exits_4(sample_homes: Path, tmp_path) -> None:
    home = tmp_path / "home"
    shutil.copytree(sample_homes / "broken" / "clean" / "home", home, symlinks=True)
    seals = tmp_path / "seals"

    first = gate(home, "--seal-dir", seals)
    assert first.returncode == 0, first.stderr
    ledger = _ledger(home)
    sealed = ledger.read_bytes()
    assert json.loads((seals / "seal.json").read_text())["files"][0]["size_bytes"] == len(sealed)

    with SessionLog.open(ledger, fsync=False) as log:  # vak appends one more entry
        log.append_message({"role": "user", "content": [{"type": "text", "text": "and one more"}]})
    second = gate(home, "--seal-dir", seals)
    assert second.returncode == 0, second.stderr
    assert "append-only since the last seal" in second.stdout
    grown = ledger.read_bytes()
    assert grown.startswith(sealed) and len(grown) > len(sealed)

    # drop the last two whole lines: the chain of what is left is intact, but sealed bytes are gone
    lines = grown.split(b"\n")[:-1]
    ledger.write_bytes(b"\n".join(lines[:-2]) + b"\n")
    third = gate(home, "--seal-dir", seals)
    assert third.returncode == 4, third.stdout + third.stderr
    assert "append_only_violation" in third.stderr
    assert f"s-sample.jsonl:{len(lines) - 1}:" in third.stderr  # the first line that is gone


def test_forged_but_rechained_ledger_passes_verify_and_fails_replay_with_exit_5(
    sample_homes: Path, tmp_path
) -> None:
    # Change one receipt's recorded prefix digest and recompute every later prev_hash: the hash
    # chain is consistent again, but the digest no longer matches the binding it was computed from.
    home = tmp_path / "home"
    shutil.copytree(sample_homes / "tiny", home, symlinks=True)
    # the 4.0.0 session: its receipts record prefix digests
    (path,) = [
        p for p in home.rglob("*.jsonl") if b'"app_version":"4.0.0"' in p.read_bytes().split(b"\n", 1)[0]
    ]
    lines = path.read_bytes().split(b"\n")[:-1]
    i = next(
        n for n, raw in enumerate(lines) if b'"purpose":"execute"' in raw and b'"prefix_digest":"' in raw
    )
    lines[i] = re.sub(rb'"prefix_digest":"[0-9a-f]', b'"prefix_digest":"X', lines[i], count=1)
    for j in range(i + 1, len(lines)):
        digest = hashlib.sha256(lines[j - 1]).hexdigest().encode()
        lines[j] = re.sub(rb'"prev_hash":"[0-9a-f]{64}"', b'"prev_hash":"' + digest + b'"', lines[j], count=1)
    path.write_bytes(b"\n".join(lines) + b"\n")

    r = gate(home)
    assert r.returncode == 5, r.stdout + r.stderr
    assert "verify ok" in r.stdout
    assert "prefix_digest" in r.stderr


def test_drift_from_the_baseline_beyond_the_tolerance_exits_6(sample_homes: Path, tmp_path) -> None:
    base = json.loads(BASELINE.read_text(encoding="utf-8"))
    base["headline"]["bytes_per_turn"] *= 0.8  # the home now weighs 25% more per turn than "before"
    moved = tmp_path / "baseline.json"
    moved.write_text(json.dumps(base), encoding="utf-8")
    r = gate(sample_homes / "tiny", "--baseline", moved, "--tolerance", "0.10")
    assert r.returncode == 6, r.stdout + r.stderr
    assert "bytes_per_turn" in r.stderr
    assert "binding_share" not in r.stderr  # only the moved figure is reported
    assert "+25.0% > ±10%" in r.stderr


@pytest.mark.parametrize("name", ["clean", "prev_hash_edited", "bom"])
def test_exit_code_follows_the_readme_severity(sample_homes: Path, name: str) -> None:
    # clean: none; prev_hash_mismatch and bom are errors in vakaudit's severity policy
    readme = (sample_homes / "broken" / name / "README.md").read_text(encoding="utf-8")
    expected = 0 if readme.rstrip().endswith("Expected findings: none.") else 1
    assert gate(sample_homes / "broken" / name / "home").returncode == expected


def test_a_crash_exiting_1_without_a_report_is_not_mistaken_for_findings(sample_homes: Path) -> None:
    # `false` exits 1 and prints nothing, like a Python traceback would: that is exit 3, not 1
    r = gate(sample_homes / "broken" / "clean" / "home", vakaudit="false")
    assert r.returncode == 3
    assert "without a report" in r.stderr
