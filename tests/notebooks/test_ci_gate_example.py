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
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from vakaudit import SessionLog

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "examples" / "ci-gate.sh"
BASELINE = REPO / "examples" / "ci-baseline-tiny.json"
LOOSE = "[tolerance]\nbytes_per_turn = 1.0\nentries_per_turn = 1.0\nbarriers_per_turn = 1.0\n"


def gate(*args: str | Path, vakaudit: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, VAKAUDIT=vakaudit or f"{sys.executable} -m vakaudit")
    return subprocess.run(
        ["bash", str(SCRIPT), *map(str, args)], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )


def _ledgers(home: Path) -> list[Path]:
    return sorted(q for q in home.rglob("*.jsonl") if "sessions" in q.relative_to(home).parts)


def test_tiny_sample_home_passes_every_gate_against_the_committed_baseline(sample_homes: Path, tmp_path) -> None:
    home = sample_homes / "tiny"
    junit = tmp_path / "junit.xml"
    r = gate(home, "--baseline", BASELINE, "--junit", junit, "--work", tmp_path / "work")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[-1] == "ci-gate: pass"
    assert "check: pass" in r.stdout
    assert ET.parse(junit).getroot().find("testsuite").get("failures") == "0"
    # the committed baseline agrees with the home measured without vakaudit
    base = json.loads(BASELINE.read_text(encoding="utf-8"))
    ledgers = _ledgers(home)
    turns = sum(b'"kind":"intent"' in line for p in ledgers for line in p.read_bytes().splitlines())
    assert base["sessions"] == len(ledgers) and base["turns"] == turns
    assert base["entries"] == sum(p.read_bytes().count(b"\n") for p in ledgers)
    assert base["metrics"]["bytes_per_turn"] == pytest.approx(sum(p.stat().st_size for p in ledgers) / turns, rel=1e-5)
    assert not any(p.name == "junit.xml" for p in home.rglob("*"))


def test_write_baseline_reproduces_the_committed_file(sample_homes: Path, tmp_path) -> None:
    out = tmp_path / "b.json"
    r = gate(sample_homes / "tiny", "--write-baseline", out)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == BASELINE.read_bytes()


def test_help_prints_usage_and_exits_0() -> None:
    # regression: `ci-gate.sh --help` said "home not found: --help"
    r = gate("--help")
    assert r.returncode == 0
    assert r.stdout.startswith("Usage: ci-gate.sh HOME --baseline FILE")
    assert "home not found" not in r.stdout + r.stderr


def test_unknown_option_is_named_and_exits_2(sample_homes: Path) -> None:
    # regression: an unknown option printed only the usage line, without saying which one
    r = gate(sample_homes / "tiny", "--baseline", BASELINE, "--tolerance", "0.05")
    assert r.returncode == 2
    assert r.stderr.splitlines()[0] == "ci-gate: unknown option: --tolerance"
    r = gate(sample_homes / "tiny", "--baseline")
    assert r.returncode == 2 and "--baseline needs a value" in r.stderr


def test_usage_errors_exit_2(sample_homes: Path, tmp_path) -> None:
    assert gate(tmp_path / "missing", "--baseline", BASELINE).returncode == 2
    assert gate(sample_homes / "tiny", "--baseline", tmp_path / "missing.json").returncode == 2
    assert gate(sample_homes / "tiny").returncode == 2  # no baseline
    r = gate(sample_homes / "tiny", "--baseline", BASELINE, "--fail-on", "sometimes")  # vakaudit's own exit 2
    assert r.returncode == 2


def test_tampered_home_fails_verify_with_exit_1_naming_the_line(sample_homes: Path) -> None:
    home_dir = sample_homes / "broken" / "payload_byte_changed"
    readme = (home_dir / "README.md").read_text(encoding="utf-8")
    assert "line_modified (line 2)" in readme
    r = gate(home_dir / "home", "--baseline", BASELINE)
    assert r.returncode == 1
    assert re.search(r"error\s+line_modified\s+\S+s-sample\.jsonl\s+2\s", r.stdout)
    assert "ci-gate: FAIL verify" in r.stderr
    assert "check: " not in r.stdout  # the first failing gate stops the run


def test_torn_last_line_passes_verify_by_default_and_fails_under_strict(sample_homes: Path, tmp_path) -> None:
    home = sample_homes / "broken" / "torn_last_line" / "home"
    base = tmp_path / "b.json"
    assert gate(home, "--write-baseline", base).returncode == 0
    assert gate(home, "--baseline", base).returncode == 0
    r = gate(home, "--baseline", base, "--torn", "strict")
    assert r.returncode == 1
    assert "torn_last_line" in r.stdout


@pytest.mark.slow
def test_seal_then_append_passes_and_a_truncated_sealed_file_exits_1(sample_homes: Path, tmp_path) -> None:
    home = tmp_path / "home"
    shutil.copytree(sample_homes / "broken" / "clean" / "home", home, symlinks=True)
    seals, base, budget = tmp_path / "seals", tmp_path / "b.json", tmp_path / "budget.toml"
    budget.write_text(LOOSE, encoding="utf-8")
    assert gate(home, "--write-baseline", base).returncode == 0
    first = gate(home, "--baseline", base, "--budget", budget, "--seal-dir", seals)
    assert first.returncode == 0, first.stdout + first.stderr
    (ledger,) = _ledgers(home)
    sealed = ledger.read_bytes()
    assert json.loads((seals / "seal.json").read_text())["files"][0]["size_bytes"] == len(sealed)

    with SessionLog.open(ledger, fsync=False) as log:  # vak appends one more entry
        log.append_message({"role": "user", "content": [{"type": "text", "text": "and one more"}]})
    second = gate(home, "--baseline", base, "--budget", budget, "--seal-dir", seals)
    assert second.returncode == 0, second.stdout + second.stderr

    # drop the last two whole lines: the chain of what is left is intact, but sealed bytes are gone
    lines = ledger.read_bytes().split(b"\n")[:-1]
    ledger.write_bytes(b"\n".join(lines[:-2]) + b"\n")
    third = gate(home, "--baseline", base, "--budget", budget, "--seal-dir", seals)
    assert third.returncode == 1, third.stdout + third.stderr
    assert "append_only_violation" in third.stdout


def test_forged_but_rechained_ledger_passes_verify_and_fails_check_with_exit_4(sample_homes: Path, tmp_path) -> None:
    # Change one receipt's recorded prefix digest and recompute every later prev_hash: the hash
    # chain is consistent again, but the digest no longer matches the binding it was computed from.
    home = tmp_path / "home"
    shutil.copytree(sample_homes / "tiny", home, symlinks=True)
    (path,) = [p for p in _ledgers(home) if b'"app_version":"4.0.0"' in p.read_bytes().split(b"\n", 1)[0]]
    lines = path.read_bytes().split(b"\n")[:-1]
    i = next(n for n, raw in enumerate(lines) if b'"purpose":"execute"' in raw and b'"prefix_digest":"' in raw)
    lines[i] = re.sub(rb'"prefix_digest":"[0-9a-f]', b'"prefix_digest":"X', lines[i], count=1)
    for j in range(i + 1, len(lines)):
        digest = hashlib.sha256(lines[j - 1]).hexdigest().encode()
        lines[j] = re.sub(rb'"prev_hash":"[0-9a-f]{64}"', b'"prev_hash":"' + digest + b'"', lines[j], count=1)
    path.write_bytes(b"\n".join(lines) + b"\n")

    r = gate(home, "--baseline", BASELINE)
    assert r.returncode == 4, r.stdout + r.stderr
    assert "ci-gate: verify ok" in r.stdout
    assert re.search(r"^replay\.prefix_digest\s+0\s+1\s", r.stdout, re.M)
    assert "ci-gate: FAIL check" in r.stderr


def test_growth_beyond_the_budget_exits_4_naming_the_kind(sample_homes: Path, tmp_path) -> None:
    home = tmp_path / "home"
    shutil.copytree(sample_homes / "tiny", home, symlinks=True)
    before = sum(p.stat().st_size for p in _ledgers(home))
    with SessionLog.open(_ledgers(home)[0], fsync=False) as log:
        log.append_activity("ci-gate-test", "note", "succeeded", "padding", data={"pad": "x" * int(before * 0.1)})
    r = gate(home, "--baseline", BASELINE)
    assert r.returncode == 4, r.stdout + r.stderr
    (row,) = [line for line in r.stdout.splitlines() if line.startswith("bytes_per_turn ")]
    assert "growth <= 5%" in row and "kind activity" in row


@pytest.mark.parametrize("name", ["clean", "prev_hash_edited", "bom"])
def test_exit_code_follows_the_readme_severity(sample_homes: Path, name: str, tmp_path) -> None:
    # clean: none; prev_hash_mismatch and bom are errors in vakaudit's severity policy
    home = sample_homes / "broken" / name / "home"
    readme = (sample_homes / "broken" / name / "README.md").read_text(encoding="utf-8")
    expected = 0 if readme.rstrip().endswith("Expected findings: none.") else 1
    base = tmp_path / "b.json"
    assert gate(home, "--write-baseline", base).returncode == 0
    assert gate(home, "--baseline", base).returncode == expected
