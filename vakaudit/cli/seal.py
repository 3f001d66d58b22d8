"""``vakaudit seal [HOME] -o seal.json``: record what every append-only file holds now."""

from __future__ import annotations

from pathlib import Path

import typer

from vakaudit.cli._output import output_option


def register(app: typer.Typer) -> None:
    @app.command("seal")
    def seal_cmd(
        home: Path | None = typer.Argument(
            None, help="The vak home directory (default: $VAK_HOME, else the platform data home)."
        ),
        out: Path = output_option(
            ...,
            "-o",
            "--out",
            help="Seal file to write (outside the home; - for standard output).",
        ),
        json_out: bool = typer.Option(False, "--json", help="Print a JSON summary of the seal on stdout."),
    ) -> None:
        """Seal the append-only files of a home: per file its size, line count, head digest and a
        running SHA-256. Later, `vakaudit verify HOME --since SEAL` proves every one only grew and
        names any file rewritten, truncated or deleted, with its first changed line.

        Exit codes: 0 sealed; 2 usage error (home not found, not a vak home, output inside the home).
        """
        from vakaudit.cli._layout import note_v7
        from vakaudit.cli._output import stdout_binary
        from vakaudit.forensics import seal_home, write_seal
        from vakaudit.outputs import check_output, is_stdout
        from vakaudit.scan import resolve_home

        root = resolve_home(home)
        note_v7(root, "seal")
        to_stdout = is_stdout(out)
        if not to_stdout:
            out = check_output(out, root)
        seal = seal_home(root)
        write_seal(seal, stdout_binary() if to_stdout else out, root)
        unsealed = len(seal["unsealed"])
        sizes = sum(f["size_bytes"] for f in seal["files"])
        if json_out:
            import json

            from vakaudit.schemas import schema_version

            doc = {"schema_version": schema_version("seal"), "format": seal["format"], "sealed_at": seal["sealed_at"],
                   "file_count": seal["file_count"], "size_bytes": sizes, "unsealed": seal["unsealed"],
                   "out": str(out)}  # fmt: skip
            typer.echo(json.dumps(doc, indent=2, ensure_ascii=False))
            return
        typer.echo(
            f"sealed {seal['file_count']} append-only file(s), {sizes:,} bytes, at {seal['sealed_at']} -> "
            + ("standard output" if to_stdout else str(out))
            + (f" ({unsealed} could not be read: listed under 'unsealed')" if unsealed else ""),
            err=to_stdout,
        )
