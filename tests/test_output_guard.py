"""Nothing is ever written inside a home: every output option of every command, found from the app.

The options are enumerated from the click command tree of ``vakaudit.cli.app``: a parameter made
with ``output_option``/``output_argument`` is a writable ``Path``; one spelled like an output
(``-o``, ``--out``, ``--export``, …) that is not marked fails the test, and every marked one is tried
with a path inside a copy of the tiny home and must exit 2 with the home byte- and mtime-identical.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from vakaudit.cli import app
from vakaudit.cli._output import OUTPUT_NAMES
from vakaudit.errors import UsageError
from vakaudit.outputs import check_output, open_output, write_output

REPO = Path(__file__).resolve().parent.parent

#: how each command is called apart from the output under test ({home} is the home)
BASE_ARGS = {
    "scan": ["{home}", "-q"],
    "report": ["{home}", "-q"],
    "analyze": ["{home}"],
    "sql": ["{home}", "select 1"],
    "replay": ["{home}"],
    "seal": ["{home}"],
    "timeline": ["{home}"],
    "readscale": ["--turns", "10", "--repeats", "1"],  # reads no home: guarded against $VAK_HOME
    "synth": [],  # writes a new home: guarded against $VAK_HOME and any home above it
    "baseline": ["{home}"],
    "check": ["{home}", "--baseline", "{baseline}"],
    "fleet scan": ["{home}"],  # refused before any cluster starts
    "fleet report": ["{lake}"],  # a lake holding the home: its outputs stay out of every home in it
}
# a lake given as an argument is read (fleet analyze, fleet report); --lake (in OUTPUT_NAMES) is written
OUTPUT_PARAM_NAMES = {"out", "output", "export", "junit", "keys_out", "scan_out", "workdir"}


def _is_output(param) -> bool:  # noqa: ANN001 - a click Parameter
    """Marked by output_option/output_argument: a writable path (click's type on older typer, the
    declared parameter info on typer >= 0.29)."""
    click_type = getattr(param, "type", None)
    if click_type is not None:
        return bool(getattr(click_type, "writable", False))
    return bool(param.type_descriptor.parameter_info.writable)


def _commands() -> list[tuple[str, object]]:
    """Every command of the app by its full name, sub-commands of a group (``fleet report``) too."""
    found = []

    def walk(prefix: str, group) -> None:  # noqa: ANN001 - a click Group
        for name, command in sorted(group.commands.items()):
            full = f"{prefix}{name}"
            if getattr(command, "commands", None):
                walk(full + " ", command)
            else:
                found.append((full, command))

    walk("", typer.main.get_command(app))
    return found


def _output_params() -> list[tuple[str, object]]:
    return [(name, param) for name, command in _commands() for param in command.params if _is_output(param)]


def test_every_option_named_like_an_output_is_marked_as_one() -> None:
    unmarked = []
    for name, command in _commands():
        for param in command.params:
            named = set(param.opts) & OUTPUT_NAMES or param.name in OUTPUT_PARAM_NAMES
            if named and not _is_output(param):
                unmarked.append(f"{name} {'/'.join(param.opts)}")
    assert unmarked == []


def test_the_app_has_the_output_options_the_commands_document() -> None:
    # a hand-written list of today's outputs: the enumeration must at least find these
    expected = {
        ("scan", "--out"), ("report", "--out"), ("report", "--scan-out"), ("analyze", "--scan-out"),
        ("sql", "--scan-out"), ("replay", "--export"), ("seal", "--out"), ("timeline", "--out"),
        ("readscale", "--out"), ("readscale", "--workdir"), ("synth", "out"), ("synth", "--keys-out"),
        ("synth", "--record"),
        ("baseline", "--out"), ("baseline", "--scan-out"), ("check", "--junit"), ("check", "--scan-out"),
        ("fleet scan", "--lake"), ("fleet report", "--out"),
    }  # fmt: skip
    found = {(cmd, next((o for o in p.opts if o.startswith("--")), p.name)) for cmd, p in _output_params()}
    assert expected <= found


@pytest.mark.parametrize(
    "target",
    ["inside", "dotdot", "symlinked_folder", "the_home"],
)
def test_every_output_option_refuses_a_path_inside_the_home(
    target: str,
    tiny_home_copy: Path,
    tmp_path: Path,
    tree_snapshot,
    monkeypatch,  # noqa: ANN001
) -> None:
    home = tiny_home_copy
    link = tmp_path / "elsewhere"
    link.symlink_to(home / "agents" / "vak", target_is_directory=True)
    inside = {
        "inside": home / "agents" / "vak" / "out.x",
        "dotdot": tmp_path / "nowhere" / ".." / "home" / "out.x",
        "symlinked_folder": link / "out.x",
        "the_home": home,
    }[target]
    monkeypatch.setenv("VAK_HOME", str(home))
    lake = _lake_of(home, tmp_path / "lake")
    before = tree_snapshot(home)
    runner = CliRunner()
    params = _output_params()
    assert params
    for command, param in params:
        assert command in BASE_ARGS, f"add how to call `{command}` to BASE_ARGS"
        fmt = {"home": home, "lake": lake, "baseline": REPO / "examples" / "ci-baseline-tiny.json"}
        base = [a.format(**fmt) for a in BASE_ARGS[command]]
        if param.param_type_name == "argument":
            args = [*command.split(), *base, str(inside)]
        else:
            args = [*command.split(), *base, param.opts[-1], str(inside)]
        if command == "synth" and param.name != "out":  # the key file and the record of a new v7 home
            args = ["synth", str(tmp_path / "new-home"), "--layout", "v7", param.opts[-1], str(inside)]
            if param.name != "keys_out":
                args += ["--keys-out", str(tmp_path / "keys.json")]
        if command in ("seal", "timeline", "baseline") and param.name != "out":
            args += ["-o", str(tmp_path / "ok.out")]
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output[-1500:])
        assert "never writes into a home" in result.output, (args, result.output)
        assert tree_snapshot(home) == before, f"vakaudit {' '.join(args)} changed the home"


def _lake_of(home: Path, lake: Path) -> Path:
    """A fleet lake holding ``home``, written by the task every Dask worker runs (no cluster)."""
    from vakaudit import __version__
    from vakaudit.fleet import lake as L
    from vakaudit.fleet.task import scan_into_lake

    L.init_lake(lake, __version__)
    outcome = scan_into_lake(str(home), str(lake), "guard")
    assert outcome["ok"], outcome
    return lake


def test_relative_output_from_another_cwd_is_refused(
    tiny_home_copy: Path,
    tmp_path: Path,
    tree_snapshot,
    monkeypatch,  # noqa: ANN001
) -> None:
    home = tiny_home_copy
    before = tree_snapshot(home)
    monkeypatch.chdir(home / "agents")
    runner = CliRunner()
    for args in (
        ["report", "..", "-o", "../r.md", "--format", "md", "-q"],
        ["replay", "..", "--export", "vak/x.jsonl"],
        ["timeline", "../agents/..", "-o", "./t.jsonl"],
        ["scan", "..", "--out", ".", "-q"],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
    assert tree_snapshot(home) == before


def test_report_from_a_scan_folder_refuses_the_home_it_was_scanned_from(
    tiny_home_copy: Path,
    tmp_path: Path,
    tree_snapshot,  # noqa: ANN001
) -> None:
    home = tiny_home_copy
    scan = tmp_path / "scan"
    runner = CliRunner()
    assert runner.invoke(app, ["scan", str(home), "--out", str(scan), "-q"]).exit_code == 0
    before = tree_snapshot(home)
    for fmt, out in (("html", home / "r.html"), ("json", home / "agents" / "r.json")):
        result = runner.invoke(app, ["report", str(scan), "-o", str(out), "--format", fmt, "-q"])
        assert result.exit_code == 2, result.output
        assert str(home) in result.output
    assert tree_snapshot(home) == before


def test_scan_out_that_holds_the_home_is_refused(tiny_home_copy: Path, tree_snapshot) -> None:  # noqa: ANN001
    home = tiny_home_copy
    before = tree_snapshot(home)
    result = CliRunner().invoke(app, ["scan", str(home), "--out", str(home.parent), "-q"])
    assert result.exit_code == 2
    assert "holds the home" in result.output
    assert tree_snapshot(home) == before


@pytest.mark.parametrize("command", [["seal"], ["timeline"], ["timeline", "--format", "csv"]])
def test_output_hard_linked_to_a_home_file_is_refused_and_not_overwritten(
    command: list[str],
    tiny_home_copy: Path,
    tmp_path: Path,
    tree_snapshot,  # noqa: ANN001
) -> None:
    # seal -o / timeline -o at a path hard-linked to a home file overwrote that home file
    home = tiny_home_copy
    hard = tmp_path / "innocent.json"
    os.link(home / "tasks.json", hard)
    before = tree_snapshot(home)
    result = CliRunner().invoke(app, [command[0], str(home), "-o", str(hard), *command[1:]])
    assert result.exit_code == 2, result.output
    assert "hard link" in result.output
    assert tree_snapshot(home) == before
    assert hard.read_bytes() == (home / "tasks.json").read_bytes()


def test_output_symlink_to_a_home_file_is_refused(
    tiny_home_copy: Path, tmp_path: Path, tree_snapshot
) -> None:  # noqa: ANN001
    home = tiny_home_copy
    link = tmp_path / "seal.json"
    link.symlink_to(home / "tasks.json")
    before = tree_snapshot(home)
    result = CliRunner().invoke(app, ["seal", str(home), "-o", str(link)])
    assert result.exit_code == 2, result.output
    assert tree_snapshot(home) == before


def test_synth_inside_an_existing_home_is_refused(tiny_home_copy: Path, tree_snapshot, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.delenv("VAK_HOME", raising=False)
    home = tiny_home_copy
    before = tree_snapshot(home)
    result = CliRunner().invoke(app, ["synth", str(home / "agents" / "new"), "--turns", "2"])
    assert result.exit_code == 2, result.output
    assert tree_snapshot(home) == before


# --- the library guard itself -------------------------------------------------------------------


def test_check_output_expands_tilde_and_refuses_the_home(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "h").mkdir()
    assert check_output("~/out.json", tmp_path / "h") == tmp_path / "out.json"
    with pytest.raises(UsageError, match="inside the home"):
        check_output("~/h/out.json", "~/h")
    with pytest.raises(UsageError, match="holds the home"):
        check_output("~", "~/h", folder=True)
    assert check_output("~", "~/h") == tmp_path  # a file output named like the parent is not inside


def test_write_output_creates_parents_and_leaves_no_temp_file(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b" / "r.txt"
    write_output(out, "hello")
    assert out.read_bytes() == b"hello"
    assert sorted(p.name for p in out.parent.iterdir()) == ["r.txt"]


def test_write_output_replaces_a_hard_link_instead_of_writing_through_it(tmp_path: Path) -> None:
    # outside any home a hard-linked output is allowed, but the other name keeps its bytes
    first = tmp_path / "first"
    first.write_bytes(b"original")
    second = tmp_path / "second"
    os.link(first, second)
    write_output(second, b"new")
    assert first.read_bytes() == b"original"
    assert second.read_bytes() == b"new"


def test_open_output_keeps_the_old_file_when_writing_fails(tmp_path: Path) -> None:
    out = tmp_path / "r.txt"
    out.write_bytes(b"before")
    with pytest.raises(RuntimeError), open_output(out) as fh:
        fh.write(b"half")
        raise RuntimeError("disk full")
    assert out.read_bytes() == b"before"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.txt"]


def test_a_file_output_that_is_a_folder_is_a_usage_error(tmp_path: Path) -> None:
    # seal -o DIR used to end in an internal error from the final rename
    with pytest.raises(UsageError, match="is a folder"):
        write_output(tmp_path, "x")
    assert list(tmp_path.iterdir()) == []


def test_a_temporary_directory_chosen_inside_the_home_is_refused(
    tiny_home_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The directory :mod:`tempfile` has chosen counts before the environment: TMPDIR names a folder
    outside the home, ``tempfile.tempdir`` one inside it."""
    import tempfile

    from vakaudit.outputs import check_temp_dir

    inside = tiny_home_copy / "agents"
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    check_temp_dir(tiny_home_copy)  # TMPDIR alone: outside the home
    monkeypatch.setattr(tempfile, "tempdir", str(inside))
    with pytest.raises(UsageError, match="inside the home"):
        check_temp_dir(tiny_home_copy)
