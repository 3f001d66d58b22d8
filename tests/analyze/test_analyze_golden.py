"""Golden results: the full analysis of each sample home, compared exactly with a committed JSON file.

Rewrite with ``pytest tests/analyze --update-golden`` after an intended change, and review the diff.
Every committed home under ``sample_homes/`` takes part (a folder holding ``sessions/`` or
``agents/``): their bytes are fixed, so their analysis is too. The broken 7.0 homes
(``sample_homes/broken7/``) are left out: each is a smaller copy of the 7.0 shape with one defect
for ``verify``, whose analyses would repeat ``v7``'s. The synthetic tiny home is checked
for determinism instead (same seed, same output), since its generator may be re-tuned.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vakaudit.analyze import analyze
from vakaudit.scan import scan_home

GOLDEN = Path(__file__).parent / "golden"
SAMPLE_HOMES = Path(__file__).resolve().parents[2] / "sample_homes"


def _committed_homes() -> list[Path]:
    if not SAMPLE_HOMES.is_dir():
        return []
    found = []
    for p in sorted(SAMPLE_HOMES.rglob("*")):
        if "broken7" in p.relative_to(SAMPLE_HOMES).parts:
            continue
        if p.is_dir() and ((p / "sessions").is_dir() or (p / "agents").is_dir()):
            if not any(parent in found for parent in p.parents):
                found.append(p)
    return found


def _check(name: str, text: str, update: bool) -> None:
    path = GOLDEN / f"{name}.json"
    if update:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    if not path.is_file():
        pytest.fail(f"no golden file {path}; run pytest {__file__} --update-golden and review it")
    assert json.loads(text) == json.loads(path.read_text(encoding="utf-8"))
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("home", _committed_homes(), ids=lambda p: p.relative_to(SAMPLE_HOMES).as_posix())
def test_golden_sample_home(home: Path, tmp_path: Path, update_golden: bool) -> None:
    scan_home(home, out=tmp_path / "scan", jobs=1)
    name = home.relative_to(SAMPLE_HOMES).as_posix().replace("/", "__")
    _check(name, analyze(tmp_path / "scan").to_json(), update_golden)


def test_output_is_stable_across_runs_and_rebuilds(tiny_analysis, tiny_scan: Path, tmp_path: Path) -> None:
    from vakaudit.synth import build_home

    again = analyze(tiny_scan).to_json()
    assert again == tiny_analysis.to_json()
    build_home(tmp_path / "home", profile="tiny", fsync=False)
    scan_home(tmp_path / "home", out=tmp_path / "scan", jobs=1)
    assert analyze(tmp_path / "scan").to_json() == again


def test_golden_files_hold_only_rounded_floats_and_no_paths(tiny_analysis) -> None:
    text = tiny_analysis.to_json()
    assert str(tiny_analysis.scan_dir) not in text
    assert "/tmp/" not in text

    def walk(v: object) -> None:
        if isinstance(v, float):
            assert v == float(f"{v:.6g}")
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(json.loads(text))
