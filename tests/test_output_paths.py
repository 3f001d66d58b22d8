"""Output paths a user types: ``-`` is standard output, missing folders are created, and a damaged
scan folder is a one-line usage error naming the file, not an internal error."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from vakaudit.cli import app

TINY = Path(__file__).resolve().parent.parent / "sample_homes" / "tiny"

#: every file output and how its command is called ({out} is the output path)
FILE_OUTPUTS = {
    ("seal", "--out"): ["seal", str(TINY), "-o", "{out}"],
    ("timeline", "--out"): ["timeline", str(TINY), "-o", "{out}"],
    ("replay", "--export"): ["replay", str(TINY), "--export", "{out}"],
    ("report", "--out"): ["report", "{scan}", "-o", "{out}", "--format", "json", "-q"],
    ("readscale", "--out"): None,
    ("baseline", "--out"): ["baseline", str(TINY), "-o", "{out}"],
    ("check", "--junit"): None,  # `--junit -` is the JUnit document on stdout; check itself is tested in tests/gates
    ("synth", "--keys-out"): None,  # key material is never printed: `-` is a usage error (tests/synth)
    ("synth", "--record"): None,  # `--record -` is tested with a v7 synth in tests/synth
    ("fleet report", "--out"): None,  # tested with its lake in tests/fleet  # `--out -` is --json; the run itself is a benchmark, not run here
}


def _commands(group=None, prefix: str = "") -> dict[str, object]:  # noqa: ANN001 - a click Group
    """Every command by its full name, sub-commands of a group (``fleet report``) too."""
    group = group or typer.main.get_command(app)
    found = {}
    for name, command in group.commands.items():
        if getattr(command, "commands", None):
            found.update(_commands(command, f"{prefix}{name} "))
        else:
            found[f"{prefix}{name}"] = command
    return found


def _file_outputs() -> set[tuple[str, str]]:
    found = set()
    for name, command in _commands().items():
        for param in command.params:
            info = param.type  # a click Path for path options: writable, file_okay, allow_dash
            if getattr(info, "writable", False) and info.file_okay:
                found.add((name, next(o for o in param.opts if o.startswith("--"))))
    return found


@pytest.fixture(scope="module")
def scan(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("scan") / "s"
    assert CliRunner().invoke(app, ["scan", str(TINY), "--out", str(out), "-q"]).exit_code == 0
    return out


def test_every_file_output_takes_dash_for_standard_output() -> None:
    commands = _commands()
    assert _file_outputs() == set(FILE_OUTPUTS)
    for cmd, opt in FILE_OUTPUTS:
        param = next(p for p in commands[cmd].params if opt in p.opts)
        assert param.type.allow_dash, (cmd, opt)


@pytest.mark.parametrize("key", sorted(k for k, v in FILE_OUTPUTS.items() if v))
def test_dash_writes_to_standard_output_and_no_file_named_dash(
    key: tuple[str, str], scan: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `timeline -o -` wrote a file named "-"
    monkeypatch.chdir(tmp_path)
    args = [a.format(out="-", scan=scan) for a in FILE_OUTPUTS[key]]
    result = CliRunner().invoke(app, args)
    assert result.exit_code in (0, 1), result.output
    assert not (tmp_path / "-").exists()
    out = result.stdout
    if key[0] == "timeline" or key[0] == "replay":
        first = json.loads(out.splitlines()[0])
        assert "rel_path" in first if key[0] == "timeline" else "body" in first
    else:
        assert json.loads(out)  # seal and the JSON report are one document on stdout


@pytest.mark.parametrize("key", sorted(k for k, v in FILE_OUTPUTS.items() if v))
def test_output_into_a_missing_folder_creates_it(key: tuple[str, str], scan: Path, tmp_path: Path) -> None:
    # timeline -o, seal -o, replay --export into a missing folder exited 3 (FileNotFoundError)
    out = tmp_path / "not" / "yet" / "there.out"
    result = CliRunner().invoke(app, [a.format(out=out, scan=scan) for a in FILE_OUTPUTS[key]])
    assert result.exit_code in (0, 1), result.output
    assert out.stat().st_size > 0
    assert sorted(p.name for p in out.parent.iterdir()) == ["there.out"]  # no temporary file left


@pytest.mark.parametrize(
    "command", [["report", "-o", "{tmp}/r.html", "-q"], ["analyze"], ["sql", "select 1"]]
)
@pytest.mark.parametrize("damage", ["{bad json", '["a list"]', ""])
def test_a_damaged_scan_manifest_names_the_file_and_what_to_do(
    command: list[str], damage: str, scan: Path, tmp_path: Path
) -> None:
    # a corrupt manifest.json gave exit 3 "JSONDecodeError …" without the file's name
    broken = tmp_path / "scan"
    shutil.copytree(scan, broken)
    (broken / "manifest.json").write_text(damage)
    args = [command[0], str(broken), *[a.format(tmp=tmp_path) for a in command[1:]]]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    line = result.output.strip()
    assert len(line.splitlines()) == 1
    assert str(broken / "manifest.json") in line
    assert "--full" in line and f"delete {broken}" in line


def test_scan_full_starts_over_on_a_damaged_manifest(scan: Path, tmp_path: Path) -> None:
    broken = tmp_path / "scan"
    shutil.copytree(scan, broken)
    (broken / "manifest.json").write_text("{bad json")
    again = CliRunner().invoke(app, ["scan", str(TINY), "--out", str(broken), "-q"])
    assert again.exit_code == 2 and "--full" in again.output
    full = CliRunner().invoke(app, ["scan", str(TINY), "--out", str(broken), "--full", "--json"])
    assert full.exit_code == 0, full.output
    assert json.loads((broken / "manifest.json").read_text())["home"] == str(TINY)
