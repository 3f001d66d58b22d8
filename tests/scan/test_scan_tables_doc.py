"""docs/tables.md is generated from the schemas; it must not drift from them."""

from __future__ import annotations

from pathlib import Path

from vakaudit.analyze.views_doc import render_doc
from vakaudit.scan.tables import all_tables

DOC = Path(__file__).resolve().parents[2] / "docs" / "tables.md"


def test_tables_doc_matches_the_schemas(update_golden: bool) -> None:
    text = render_doc()
    if update_golden:
        DOC.parent.mkdir(exist_ok=True)
        DOC.write_text(text, encoding="utf-8")
    assert DOC.read_text(encoding="utf-8") == text, "run: pytest tests/scan --update-golden"


def test_every_table_and_column_is_documented() -> None:
    doc = DOC.read_text(encoding="utf-8")
    for name, (schema, _) in all_tables().items():
        assert f"## `{name}`" in doc
        for field in schema:
            assert f"| `{field.name}` |" in doc
