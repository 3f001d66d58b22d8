"""``python -m vakaudit.artifacts``: write the kind index (``_index_data.py``) again from the kind
modules (every one imported)."""

from vakaudit.artifacts import _index, kind_modules

_index.DATA_FILE.write_text(_index.source(kind_modules()), encoding="utf-8")
print(f"wrote {_index.DATA_FILE}")
