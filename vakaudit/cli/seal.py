"""``vakaudit seal HOME -o seal.json``: record what every append-only file holds now."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command("seal")
    def seal_cmd(
        home: Path = typer.Argument(..., help="The vak home directory."),
        out: Path = typer.Option(..., "-o", "--out", help="Seal file to write (outside the home)."),
        json_out: bool = typer.Option(False, "--json", help="Print a JSON summary of the seal on stdout."),
    ) -> None:
        """Seal the append-only files of a home: per file its size, line count, head digest and a
        running SHA-256. Later, `vakaudit verify HOME --since SEAL` proves every one only grew and
        names any file rewritten, truncated or deleted, with its first changed line.

        Exit codes: 0 sealed; 2 usage error (home not found, output inside the home).
        """
        from vakaudit.cli._layout import note_v7

        note_v7(home, "seal")
        from vakaudit.errors import UsageError
        from vakaudit.forensics import is_inside, seal_home, write_seal
        from vakaudit.scan import resolve_home

        root = resolve_home(home)
        if is_inside(root, out):
            raise UsageError(
                f"{out} is inside the home; vakaudit never writes into a home, choose another path"
            )
        seal = seal_home(root)
        write_seal(seal, out)
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
            f"sealed {seal['file_count']} append-only file(s), {sizes:,} bytes, at {seal['sealed_at']} -> {out}"
            + (f" ({unsealed} could not be read: listed under 'unsealed')" if unsealed else "")
        )
