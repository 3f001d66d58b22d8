"""``vakaudit kinds``: list the artifact kinds of the write map (one module each in vakaudit/artifacts)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from vakaudit.artifacts import Baseline7


def register(app: typer.Typer) -> None:
    @app.command("kinds")
    def kinds_cmd(
        json_out: bool = typer.Option(
            False, "--json", help='Print every kind with its card as JSON ({"schema_version", "kinds": [...]}).'
        ),
    ) -> None:
        """List the artifact kinds: name, registry class, group, layouts (g1/g2 JSONL era, g3 the 7.0
        baseline) and path patterns."""
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
                        "table": None if k.schema is None else k.table_name,
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
                        "layouts": list(k.layouts),
                        "v7": None if k.v7 is None else _v7_json(k.v7),
                    }
                )
            from vakaudit.schemas import schema_version

            doc = {"schema_version": schema_version("kinds"), "kinds": rows}
            typer.echo(json.dumps(doc, indent=2, ensure_ascii=False))
            return
        header = ("kind", "class", "write discipline", "layouts", "path patterns")
        rows = [
            (
                k.name,
                str(k.registry_class),
                k.card.discipline,
                ",".join(k.layouts),
                ", ".join(dict.fromkeys(k.all_patterns)) or "(everything no other kind claims)",
            )
            for k in kinds
        ]
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(4)]
        for row in [header, *rows]:
            typer.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)) + "  " + row[4])


def _v7_json(v7: Baseline7) -> dict[str, Any]:
    """A kind's place in vak's 7.0 REGISTRY, as ``kinds --json`` prints it."""
    card = v7.card
    return {
        "patterns": list(v7.patterns),
        "registry_entries": list(v7.entries),
        "vak_class": v7.vak_class,
        "owner": v7.owner,
        "card": None
        if card is None
        else {
            "writer": card.writer,
            "trigger": card.trigger,
            "discipline": card.discipline,
            "barriers_per_write": card.barriers_per_write,
            "read": card.read,
            "bound": card.bound,
            "read_class": card.read_class,
        },
    }
