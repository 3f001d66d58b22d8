"""``python -m vakaudit.artifacts``: write the kind index (``_index_data.py``) again from the kind
modules (every one imported)."""

import vakaudit.artifacts as artifacts
from vakaudit.artifacts import _index, kind_modules

_digest = _index.sources_digest(_index.package_sources(artifacts.__path__))
if _digest is None:
    raise SystemExit("vakaudit.artifacts: a source file of the package cannot be read; no index written")
_index.DATA_FILE.write_text(_index.source(kind_modules(), _digest), encoding="utf-8")
print(f"wrote {_index.DATA_FILE}")
