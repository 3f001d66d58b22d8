"""``python -m vakaudit.artifacts``: write the kind index (``_index_data.py``) again from the kind
modules (every one imported)."""

from vakaudit.artifacts import _index, _module_files, kind_modules

_digest = _index.sources_digest(_module_files())
if _digest is None:
    raise SystemExit("vakaudit.artifacts: a kind module's source cannot be read; no index written")
_index.DATA_FILE.write_text(_index.source(kind_modules(), _digest), encoding="utf-8")
print(f"wrote {_index.DATA_FILE}")
