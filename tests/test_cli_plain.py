"""A plain invocation of a command declared as data (``verify``) runs without Typer, with the same
arguments, output, exit code and errors as through the Typer app.

The oracle for the arguments is Typer itself: the command's declaration is registered on a Typer app
whose command records what it is handed, and :func:`vakaudit.cli._params.parse` must hand the same,
or decline (None) and leave the command line to Typer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from fresh_process import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from vakaudit.cli import _params, app
from vakaudit.cli import scan as scan_cmd
from vakaudit.cli import verify as verify_cmd
from vakaudit.cli._params import Param, parse, typer_callback

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "sample_homes" / "tiny"


def _typer_kwargs(params: tuple[Param, ...], args: list[str]) -> tuple[int, dict | None]:
    """What Typer hands a command declared by ``params`` for ``args``: (exit code, kwargs or None)."""
    seen: list[dict] = []

    def run(**kwargs):  # noqa: ANN003, ANN202
        seen.append(kwargs)
        return 0

    probe = typer.Typer(add_completion=False)
    probe.command("probe")(typer_callback(run, params))

    @probe.callback()
    def _root() -> None:  # a group, as the real app is: the command is named
        pass

    result = CliRunner().invoke(probe, ["probe", *args])
    return result.exit_code, (seen[0] if seen else None)


PLAIN = [
    [],
    ["/some/home"],
    ["/some/home", "--json"],
    ["--json", "/some/home"],
    ["--torn", "skip", "h"],
    ["--torn", "SKIP", "h"],
    ["--torn=Tolerate-Tail", "h"],
    ["--fail-on", "warning", "--deep", "--no-cross", "-q", "h"],
    ["--fail-on=CRITICAL", "h", "--quiet"],
    ["--since", "seal.json", "h"],
    ["--since=rel/seal.json"],
    ["--keys", "home", "h"],
    ["--keys=k.json", "h", "--json"],
    ["h", "--keys", "some file with spaces"],
]
TYPER_ONLY = [
    ["--help"],
    ["h", "--help"],
    ["--torn", "bogus", "h"],
    ["--fail-on", "fatal"],
    ["h", "g"],
    ["--json", "--json", "h"],
    ["--keys"],
    ["--keys", "-q"],
    ["--", "h"],
    ["-"],
    [""],
    ["-qq", "h"],
    ["--jso", "h"],
    ["--json=1", "h"],
    ["--quiet=yes"],
    ["-x"],
]


@pytest.mark.parametrize("args", PLAIN, ids=lambda a: " ".join(a) or "no-args")
def test_a_plain_invocation_is_parsed_as_typer_parses_it(args: list[str]) -> None:
    parsed = parse(verify_cmd.PARAMS, args)
    assert parsed is not None, args
    kwargs, debug = parsed
    code, typer_kwargs = _typer_kwargs(verify_cmd.PARAMS, args)
    assert code == 0 and kwargs == typer_kwargs
    assert debug is False


@pytest.mark.parametrize("args", TYPER_ONLY, ids=lambda a: " ".join(a) or "empty")
def test_anything_unsure_is_left_to_typer(args: list[str]) -> None:
    assert parse(verify_cmd.PARAMS, args) is None


def test_debug_anywhere_among_the_arguments_is_the_roots_flag() -> None:
    kwargs, debug = parse(verify_cmd.PARAMS, ["h", "--debug", "--json"])
    assert debug is True and kwargs == _typer_kwargs(verify_cmd.PARAMS, ["h", "--json"])[1]


TOKENS = ["h", "x/y", "--json", "--torn", "skip", "STRICT", "bogus", "--fail-on", "info", "Warning", "--since",
          "--deep", "--no-cross", "--keys", "home", "-q", "--quiet", "--torn=skip", "--keys=k", "--", "-", "--help",
          "-x", "--json=1", ""]  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=6))
def test_whatever_plain_parsing_accepts_typer_hands_the_command_the_same(args: list[str]) -> None:
    parsed = parse(verify_cmd.PARAMS, args)
    if parsed is None:
        return  # Typer parses it, as before
    code, typer_kwargs = _typer_kwargs(verify_cmd.PARAMS, args)
    assert code == 0 and parsed[0] == typer_kwargs, args


def _scan_cases(tmp: Path) -> tuple[list[list[str]], list[list[str]]]:
    existing = tmp / "existing"
    existing.mkdir(exist_ok=True)
    a_file = tmp / "a-file"
    a_file.write_text("x")
    plain = [
        [],
        ["h"],
        ["h", "--out", str(tmp / "new" / "deeper")],
        ["--out", str(existing), "h", "--full", "-q"],
        [f"--out={existing}", "--json", "-j", "2"],
        ["--jobs", "3", "--keys", "home", "h"],
        ["--jobs=+4", "h"],
        ["-j", " 5", "h"],
    ]
    typer_only = [
        ["--out", str(a_file), "h"],  # a file where a folder goes: click's error
        ["--out", "-", "h"],
        ["--jobs", "two", "h"],
        ["--jobs", "1.5"],
        ["-j", "-1"],
        ["--out"],
        ["h", "--help"],
    ]
    return plain, typer_only


def test_scan_arguments_are_parsed_as_typer_parses_them(tmp_path: Path) -> None:
    plain, typer_only = _scan_cases(tmp_path)
    for args in plain:
        parsed = parse(scan_cmd.PARAMS, args)
        assert parsed is not None, args
        code, typer_kwargs = _typer_kwargs(scan_cmd.PARAMS, args)
        assert code == 0 and parsed[0] == typer_kwargs, args
    for args in typer_only:
        assert parse(scan_cmd.PARAMS, args) is None, args


def test_an_output_folder_click_refuses_is_left_to_typer(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):  # root may write anywhere: click accepts it then too
            assert _typer_kwargs(scan_cmd.PARAMS, ["--out", str(locked)])[0] == 0
            assert parse(scan_cmd.PARAMS, ["--out", str(locked)]) is not None
        else:
            assert _typer_kwargs(scan_cmd.PARAMS, ["--out", str(locked)])[0] == 2
            assert parse(scan_cmd.PARAMS, ["--out", str(locked)]) is None
    finally:
        locked.chmod(0o700)


FILE_OUT = (Param("junit", Path, None, "A file vakaudit writes.", ("--junit",), optional=True, output="file"),)


def test_a_file_output_is_parsed_as_typer_parses_it(tmp_path: Path) -> None:
    existing, folder = tmp_path / "report.xml", tmp_path / "folder"
    existing.write_text("x")
    folder.mkdir()
    # click's Path for a file output takes a new path, an existing file and (dir_okay) a folder
    for args in (["--junit", str(tmp_path / "new.xml")], ["--junit", str(existing)], [f"--junit={folder}"], []):
        parsed = parse(FILE_OUT, args)
        assert parsed is not None, args
        code, typer_kwargs = _typer_kwargs(FILE_OUT, args)
        assert code == 0 and parsed[0] == typer_kwargs, args
    # '-' (standard output) is Typer's to parse
    assert parse(FILE_OUT, ["--junit", "-"]) is None
    assert _typer_kwargs(FILE_OUT, ["--junit", "-"]) == (0, {"junit": Path("-")})


def test_a_plain_scan_runs_without_typer_and_writes_what_the_app_writes(tmp_path: Path) -> None:
    fresh = run_cli(["scan", str(TINY), "--out", str(tmp_path / "plain"), "--json", "-j", "1"])
    assert fresh.code in (0, None) and "typer" not in fresh.modules
    runner = CliRunner().invoke(app, ["scan", str(TINY), "--out", str(tmp_path / "app"), "--json", "-j", "1"])
    assert runner.exit_code == 0
    got, want = json.loads(fresh.stdout), json.loads(runner.output)
    for doc in (got, want):
        doc.pop("elapsed_s", None)
        doc.pop("out", None)
        doc.pop("stats", None)  # timings
        doc.pop("scanned_at", None)
    assert got == want

    inside = run_cli(["scan", str(TINY), "--out", str(TINY / "tables"), "-q"])
    assert inside.code == 2 and "typer" not in inside.modules
    assert not (TINY / "tables").exists()


def test_the_declared_command_has_typers_help_names_and_defaults() -> None:
    command = typer.main.get_command(app).commands["verify"]
    options = {p.name: p for p in command.params}
    assert options["torn"].opts == ["--torn"] and options["torn"].default == "tolerate-tail"
    assert options["quiet"].opts == ["--quiet", "-q"] and options["quiet"].is_flag
    assert options["home"].param_type_name == "argument"
    assert "debug" in options  # the root's flag, added to every command
    help_text = CliRunner().invoke(app, ["verify", "--help"]).output
    assert "--fail-on <info|warning|error|critical>" in help_text and "Exit codes:" in help_text


def test_a_plain_verify_runs_without_typer_and_says_what_the_app_says(tmp_path: Path) -> None:
    runner = CliRunner().invoke(app, ["verify", str(TINY), "--json"])
    fresh = run_cli(["verify", str(TINY), "--json"])
    assert "typer" not in fresh.modules and "vakaudit.cli._group" not in fresh.modules
    assert fresh.code == runner.exit_code
    assert json.loads(fresh.stdout) == json.loads(runner.output)

    table = run_cli(["verify", str(TINY), "--fail-on", "info"])
    assert "typer" not in table.modules
    assert table.code == 1 and table.stdout == CliRunner().invoke(app, ["verify", str(TINY), "--fail-on", "info"]).output


def test_a_plain_verify_reports_a_mistake_in_one_line_and_exit_2(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    fresh = run_cli(["verify", str(missing)])
    assert "typer" not in fresh.modules
    assert fresh.code == 2
    lines = [line for line in fresh.stderr.splitlines() if not line.startswith("modules:")]
    assert lines == [f"vakaudit: vak home not found: {missing} is not a directory (check the path)"]
    assert CliRunner().invoke(app, ["verify", str(missing)]).exit_code == 2

    debug = subprocess.run([sys.executable, "-m", "vakaudit", "verify", str(missing), "--debug"],
                           capture_output=True, text=True, check=False)  # fmt: skip
    assert debug.returncode == 2 and "Traceback (most recent call last)" in debug.stderr
    assert debug.stderr.rstrip().endswith(lines[0])


def test_an_invocation_typer_must_parse_still_gets_typers_answer() -> None:
    fresh = run_cli(["verify", str(TINY), "--torn", "bogus"])
    assert "typer" in fresh.modules and fresh.code == 2
    assert "Invalid value for '--torn'" in fresh.stderr


def test_commands_not_declared_as_data_are_typers() -> None:
    fresh = run_cli(["kinds", "--json"])
    assert fresh.code in (0, None) and "typer" in fresh.modules


def test_a_param_kind_without_a_plain_conversion_is_refused() -> None:
    with pytest.raises(TypeError):
        _params.parse((Param("n", float, 0.0, "a number", ("--n",)),), ["--n", "3"])


def test_report_arguments_are_parsed_as_typer_parses_them(tmp_path: Path) -> None:
    from vakaudit.cli import report as report_cmd

    other = tmp_path / "other"
    other.mkdir()
    plain = [
        [],
        ["h", "-o", str(tmp_path / "r.html")],
        [f"--out={tmp_path / 'r.md'}", "--format", "md", "h", "-q"],
        ["h", "--scan-out", str(tmp_path / "scan"), "--include-content", "--verify"],
        ["--readscale", "rs.json", "--link-base", "https://x/", "--generated-at", "2026-11-01T12:00:00Z", "h"],
        ["--keys", "home", "--compare", str(other), "--compare-keys", "k.json", "h"],
    ]
    for args in plain:
        parsed = parse(report_cmd.PARAMS, args)
        assert parsed is not None, args
        code, typer_kwargs = _typer_kwargs(report_cmd.PARAMS, args)
        assert code == 0 and parsed[0] == typer_kwargs, args
        assert report_cmd.plain_ok(**parsed[0]), args
    for args in (["-o", "-", "h"], ["h", "--help"], ["--format"], ["--scan-out", str(tmp_path / "r.html")]):
        if args[-1].endswith("r.html"):
            (tmp_path / "r.html").write_text("x")  # a file where the scan's folder goes: click's error
        assert parse(report_cmd.PARAMS, args) is None, args
    # values run() refuses with click's usage error are parsed, then left to Typer by plain_ok
    refused = [
        ["--format", "pdf", "h"],
        ["--generated-at", "yesterday", "h"],
        ["--compare", str(tmp_path / "nowhere"), "h"],
        ["--compare-keys", "k.json", "h"],
    ]
    for args in refused:
        parsed = parse(report_cmd.PARAMS, args)
        assert parsed is not None and not report_cmd.plain_ok(**parsed[0]), args


def test_a_plain_report_runs_without_typer_and_writes_what_the_app_writes(tmp_path: Path) -> None:
    fixed = ["--generated-at", "2026-11-01T12:00:00Z", "-q"]
    fresh = run_cli(["report", str(TINY), "-o", str(tmp_path / "plain.html"), "--scan-out", str(tmp_path / "s1"),
                     *fixed])  # fmt: skip
    assert fresh.code in (0, None) and "typer" not in fresh.modules, fresh.stderr
    runner = CliRunner().invoke(app, ["report", str(TINY), "-o", str(tmp_path / "app.html"), "--scan-out",
                                      str(tmp_path / "s2"), *fixed])  # fmt: skip
    assert runner.exit_code == 0, runner.output
    assert (tmp_path / "plain.html").read_text() == (tmp_path / "app.html").read_text()
    # to standard output, as Markdown
    md = run_cli(["report", str(tmp_path / "s1"), "--format", "md", *fixed])
    assert "typer" not in md.modules and md.stdout.startswith("# ")
    assert md.stdout == CliRunner().invoke(app, ["report", str(tmp_path / "s1"), "--format", "md", *fixed]).output


def test_a_report_value_run_refuses_gets_typers_usage_error(tmp_path: Path) -> None:
    for args, hint in ((["--format", "pdf"], "--format: must be one of html, md, json, got 'pdf'"),
                       (["--compare-keys", "k.json"], "--compare-keys: needs --compare OTHER")):  # fmt: skip
        fresh = run_cli(["report", str(TINY), "-o", str(tmp_path / "r.html"), *args])
        assert "typer" in fresh.modules and fresh.code == 2, args
        assert f"Invalid value for {hint}" in fresh.stderr, fresh.stderr
        assert not (tmp_path / "r.html").exists()
