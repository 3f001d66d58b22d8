"""``vakaudit version``: print the version (same as ``--version``)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    @app.command("version")
    def version() -> None:
        """Print the vakaudit version."""
        from vakaudit import __version__

        typer.echo(f"vakaudit {__version__}")
