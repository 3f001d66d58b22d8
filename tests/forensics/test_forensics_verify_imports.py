"""What a fresh ``vakaudit verify`` process imports: the parts a home does not use stay unloaded.

A 7.0 home of segment directories alone (no JSONL side file, no index, no checkpoint, no
``refs.db``) never needs the cross checks (and sqlite3 with them), the seal module (``--since``
only), the line, Markdown and checkpoint (JSON stream) readers of the side files, a thread pool's
module, or the JSONL ledger's reader and verdict; a home that has those inputs does import them (so
the lists below are not vacuous). Each case runs in a new interpreter through a wrapper that prints
``sys.modules`` at exit.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from fresh_process import run_cli

SAMPLES = Path(__file__).resolve().parents[2] / "sample_homes"

# the modules a segments-only 7.0 home has no use for
UNUSED_BY_SEGMENTS = (
    "vakaudit.forensics.crosscheck",
    "vakaudit.forensics.seal",
    "vakaudit._sqlite",
    "sqlite3",
    "vakaudit.artifacts._lines",
    "vakaudit.artifacts._markdown",
    "vakaudit.artifacts._jsonstream",
    "concurrent.futures",
    "pyarrow",
    # the JSONL ledger's reader, chain and verdict: the kind registry loads the session ledger's
    # module to classify files, not what reads a JSONL ledger
    "vakaudit.ledger.verdict",
    "vakaudit.ledger.records",
    "vakaudit.ledger.chain",
    # tempfile (and random with it): the check that the temporary directory is outside the home
    # reads the environment when tempfile has not been imported; secrets: none is needed to read
    "tempfile",
    "secrets",
)

def _verify(*args: str) -> tuple[int, set[str], str]:
    """``vakaudit verify ARGS`` in a new interpreter: exit code, modules imported by the end, stdout."""
    got = run_cli(["verify", *args])
    return got.code, set(got.modules), got.stdout


@pytest.fixture(scope="module")
def segments_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample 7.0 home without its checkpoint (a JSONL-era side file) and its ``refs.db``."""
    home = tmp_path_factory.mktemp("v7seg") / "home"
    shutil.copytree(SAMPLES / "v7", home, symlinks=True)
    shutil.rmtree(home / "agents/vak/checkpoints")
    for refs in home.glob("tenants/*/store/refs.db"):
        refs.unlink()
    return home


def test_keyless_verify_of_a_segments_only_home_imports_none_of_the_side_file_machinery(segments_only: Path) -> None:
    code, modules, stdout = _verify(str(segments_only), "--json")
    assert code == 0, stdout
    report = json.loads(stdout)
    assert report["segment_dirs"] == 5 and report["frames"] == 25
    assert report["cross_checks"] == []
    assert sorted(m for m in UNUSED_BY_SEGMENTS if m in modules) == []
    assert "vakaudit.forensics.home7" in modules  # what it did import: the segment verifier


def test_a_home_with_side_files_and_an_index_imports_the_cross_checks() -> None:
    """The sample 7.0 home has a checkpoint (read by its kind's reader) and a ``refs.db``: the cross
    checks and sqlite3 are imported when a file needs them. No cross check reads a checkpoint's rows:
    none is built, and pyarrow stays unloaded."""
    code, modules, stdout = _verify(str(SAMPLES / "v7"), "--json")
    assert code == 0, stdout
    assert {"vakaudit.forensics.crosscheck", "sqlite3", "vakaudit.artifacts._jsonstream"} <= modules
    assert "pyarrow" not in modules
    assert "vakaudit.forensics.seal" not in modules


def test_a_jsonl_home_imports_the_cross_checks_and_reports_them() -> None:
    code, modules, stdout = _verify(str(SAMPLES / "tiny"), "--json")
    assert code == 0, stdout
    # pyarrow too: the cost log's and the routing evidence's rows feed the cross checks as Arrow batches
    assert {"vakaudit.forensics.crosscheck", "vakaudit.ledger.verdict", "vakaudit.ledger.records", "pyarrow"} <= modules
    assert json.loads(stdout)["cross_checks"]  # the checks ran: their inputs were there


def test_verify_since_imports_the_seal_module(segments_only: Path, tmp_path: Path) -> None:
    from vakaudit.forensics import seal_home, write_seal

    seal = tmp_path / "seal.json"
    write_seal(seal_home(segments_only), seal)
    code, modules, stdout = _verify(str(segments_only), "--json", "--since", str(seal))
    assert code == 0, stdout
    assert "vakaudit.forensics.seal" in modules
