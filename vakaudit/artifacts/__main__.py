"""``python -m vakaudit.artifacts``: write ``_index_data.py`` again from the kind modules."""

from vakaudit.artifacts._index import main

main()
