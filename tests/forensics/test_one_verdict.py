"""One verdict per defect: ``scan`` (its ``findings`` table) and ``verify`` report the same findings.

Compared as a multiset of (code, rel_path, line_no, severity): same code, same line, same count. Run
over every broken sample home, the tiny home, a home with broken side files (garbage sidecar rows, a
config file, a checkpoint and a flow run that do not parse), and every mutated ledger of the property
tests (tests/ledger/test_properties.py: two flips of every byte of a small ledger;
tests/forensics/test_forensics_flip.py: every bit of the spec's chain example), each mutated ledger a
file of one home, scanned and verified once. Expectations are per home in each README line and in
tests/forensics/test_forensics_sample_homes.py; here the two commands must agree with each other.
"""

from __future__ import annotations

import importlib.util
import shutil
from collections import Counter
from pathlib import Path

import pytest

from vakaudit.forensics import verify_home
from vakaudit.scan import scan_home

TESTS = Path(__file__).resolve().parent.parent
BROKEN = TESTS.parent / "sample_homes" / "broken"
SPEC_LEDGER = TESTS / "ledger" / "vectors" / "chain_spec_s3.jsonl"
WSKEY = "2599eb06cf360587"


def _verdicts(home: Path, out: Path) -> tuple[Counter, Counter]:
    res = scan_home(home, out=out, jobs=1)
    scanned = Counter(
        (r["code"], r["rel_path"], r["line_no"], r["severity"]) for r in res.table("findings").to_pylist()
    )
    verified = Counter((f.code.value, f.rel_path, f.line_no, f.severity.value) for f in verify_home(home).findings)
    return scanned, verified


def _differences(scanned: Counter, verified: Counter) -> list[tuple]:
    return sorted(
        ((k, scanned[k], verified[k]) for k in set(scanned) | set(verified) if scanned[k] != verified[k]), key=str
    )


HOMES = sorted(p.name for p in BROKEN.iterdir() if (p / "home").is_dir())


@pytest.mark.parametrize("name", HOMES)
def test_scan_and_verify_agree_on_every_broken_sample_home(name: str, tmp_path: Path) -> None:
    scanned, verified = _verdicts(BROKEN / name / "home", tmp_path / "out")
    assert _differences(scanned, verified) == []
    readme = (BROKEN / name / "README.md").read_text(encoding="utf-8")
    if "Expected findings: none" not in readme:
        assert scanned, name  # the defect the README names is reported, not silently agreed away


def test_scan_and_verify_agree_on_the_tiny_home(sample_homes: Path, tmp_path: Path) -> None:
    scanned, verified = _verdicts(sample_homes / "tiny", tmp_path / "out")
    assert _differences(scanned, verified) == []
    # scan said 13 and verify 7: each work line with vak's duplicate 'kind' key was its own finding in
    # the scan, one per ledger in verify; and the scan did not report abandoned branches
    codes = Counter(code for code, _, _, _ in scanned.elements())
    assert codes == {"work_duplicate_kind": 3, "abandoned_branch": 3, "secret_file": 1}


def test_scan_and_verify_agree_on_broken_side_files(sample_homes: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(sample_homes / "tiny", home, symlinks=True)
    with open(home / "agents/vak/cost-log.jsonl", "ab") as f:
        f.write(b"not json\n{\n")
    (home / "feeds.toml").write_bytes(b"[feeds\nbroken = \n")
    checkpoint = next((home / "agents/vak/checkpoints").glob("*/0001.json"))
    checkpoint.write_bytes(checkpoint.read_bytes()[:40])
    flow = next((home / "agents/vak/flow-runs").rglob("*.json"))
    flow.write_bytes(b'{"id": ')
    scanned, verified = _verdicts(home, tmp_path / "out")
    assert _differences(scanned, verified) == []
    side = Counter((code, rel) for code, rel, _, _ in scanned.elements() if code == "sidecar_unparseable_row")
    rels = {rel for _, rel in side}
    assert {"agents/vak/cost-log.jsonl", "feeds.toml", checkpoint.relative_to(home).as_posix(),
            flow.relative_to(home).as_posix()} <= rels  # fmt: skip


def _small_ledger(tmp_path: Path) -> bytes:
    """The small ledger tests/ledger/test_properties.py mutates (built by its own function)."""
    spec = importlib.util.spec_from_file_location("ledger_properties", TESTS / "ledger" / "test_properties.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod._small_ledger(tmp_path)


@pytest.mark.slow
def test_scan_and_verify_agree_on_every_mutated_ledger_of_the_property_tests(tmp_path: Path) -> None:
    home = tmp_path / "home"
    sessions = home / "agents" / "vak" / "sessions" / WSKEY
    sessions.mkdir(parents=True)
    before_last: set[str] = set()  # mutations before the last line: a successor witnesses them
    n = 0
    small = _small_ledger(tmp_path)
    spec = SPEC_LEDGER.read_bytes()
    # tests/ledger/test_properties.py: two flips of every byte; test_forensics_flip.py: every bit
    for src, flips in ((small, (0x01, 0x20)), (spec, tuple(1 << b for b in range(8)))):
        last_start = src.rindex(b"\n", 0, len(src) - 1) + 1
        for pos in range(len(src)):
            for flip in flips:
                data = bytearray(src)
                data[pos] ^= flip
                rel = f"agents/vak/sessions/{WSKEY}/m{n:05d}.jsonl"
                (home / rel).write_bytes(data)
                if pos < last_start:
                    before_last.add(rel)
                n += 1
    assert n == 2 * len(small) + 8 * len(spec)
    scanned, verified = _verdicts(home, tmp_path / "out")
    assert _differences(scanned, verified) == []
    flagged = {rel for _, rel, _, sev in scanned.elements() if sev != "info"}
    assert before_last - flagged == set()
