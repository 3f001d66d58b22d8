"""verify reads the small files of a kind together (the readers' bundles, as the scan does): the
findings, and the rows each cross check is fed, are those of reading every file alone."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from vakaudit.artifacts import all_kinds
from vakaudit.forensics import home as home_mod
from vakaudit.forensics.crosscheck import CrossCollector
from vakaudit.forensics.home import verify_home

TINY = Path(__file__).resolve().parents[2] / "sample_homes" / "tiny"
SINKS = ("add_routing_rows", "add_cost_rows", "add_outbox_rows", "add_commitment_rows")


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(TINY, home, symlinks=True)
    # damage in small bundled files: an unparseable line in a cost log and in an outbox job file
    cost = next(home.rglob("cost-log.jsonl"))
    with cost.open("ab") as f:
        f.write(b'{"ts": "2026-01-01T00:00:00Z", "model": \n')
    job = next(p for p in home.rglob("*.json") if "delivery" in p.parts)
    job.write_bytes(job.read_bytes() + b"\n{oops")
    return home


def _run(home: Path, monkeypatch: pytest.MonkeyPatch, *, bundled: bool) -> tuple[list[dict], dict[str, list]]:
    fed: dict[str, list] = {name: [] for name in SINKS}
    with monkeypatch.context() as m:
        for name in SINKS:
            original = getattr(CrossCollector, name)

            def record(self, rel_path, rows, _name=name, _original=original):  # noqa: ANN001, ANN202
                rows = list(rows)
                fed[_name].append((rel_path, rows))
                return _original(self, rel_path, rows)

            m.setattr(CrossCollector, name, record)
        if not bundled:
            for kind in all_kinds():
                if getattr(kind.reader, "bundle", None) is not None:
                    m.delattr(kind.reader, "bundle")
        report = verify_home(home, jobs=0)
    return [f.to_dict() for f in report.findings], fed


def test_small_files_read_together_give_what_reading_each_alone_gives(home: Path, monkeypatch) -> None:  # noqa: ANN001
    alone_findings, alone_fed = _run(home, monkeypatch, bundled=False)
    together_findings, together_fed = _run(home, monkeypatch, bundled=True)
    assert together_findings == alone_findings
    damaged = {(f["code"], f["rel_path"].split("/")[0]) for f in alone_findings}
    assert {("sidecar_unparseable_row", "cost-log.jsonl"), ("sidecar_unparseable_row", "delivery"),
            ("outbox_job_invalid", "delivery")} <= damaged
    for name in SINKS:
        assert sorted(together_fed[name], key=lambda x: x[0]) == sorted(alone_fed[name], key=lambda x: x[0]), name
        assert alone_fed[name], name  # the tiny home feeds every one of these checks
    outbox = [rows for _rel, rows in alone_fed["add_outbox_rows"]]
    assert sum(len(r) for r in outbox) >= 5


def test_a_bundle_that_cannot_build_its_rows_reads_each_file_alone(home: Path, monkeypatch) -> None:  # noqa: ANN001
    alone_findings, alone_fed = _run(home, monkeypatch, bundled=False)
    from vakaudit.artifacts import _jsonl

    def broken(self):  # noqa: ANN001, ANN202
        raise RuntimeError("a bug building many files' rows")

    monkeypatch.setattr(_jsonl.JsonlBundle, "batches", broken)
    findings, fed = _run(home, monkeypatch, bundled=True)
    assert findings == alone_findings
    assert {n: sorted(v, key=lambda x: x[0]) for n, v in fed.items()} == {
        n: sorted(v, key=lambda x: x[0]) for n, v in alone_fed.items()}
    assert home_mod._SmallFiles  # the path under test
