"""``vakaudit kinds``: list the artifact kinds of the write map (one module each in vakaudit/artifacts)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    @app.command("kinds")
    def kinds_cmd(
        json_out: bool = typer.Option(False, "--json", help="Print every kind with its card as JSON."),
    ) -> None:
        """List the artifact kinds: name, registry class, write discipline and path patterns."""
        import json

        from vakaudit.artifacts import all_kinds

        kinds = all_kinds()
        if json_out:
            rows = []
            for k in kinds:
                rows.append(
                    {
                        "name": k.name,
                        "title": k.title,
                        "registry_class": str(k.registry_class),
                        "group": str(k.card.group),
                        "patterns": list(k.patterns),
                        "append_only": k.append_only,
                        "secret": k.secret,
                        "table": None
                        if k.schema is None
                        else ("entries" if k.name == "session_ledger" else k.name),
                        "columns": [] if k.schema is None else k.schema.names,
                        "card": {
                            "writer": k.card.writer,
                            "trigger": k.card.trigger,
                            "discipline": k.card.discipline,
                            "barriers_per_write": k.card.barriers_per_write,
                            "read": k.card.read,
                            "bound": k.card.bound,
                            "read_class": k.card.read_class,
                        },
                        "description": (k.description or "").strip(),
                    }
                )
            typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
            return
        header = ("kind", "class", "write discipline", "path patterns")
        rows = [
            (k.name, str(k.registry_class), k.card.discipline, ", ".join(k.patterns) or "(everything no other kind claims)")
            for k in kinds
        ]
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(3)]
        for row in [header, *rows]:
            typer.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)) + "  " + row[3])
