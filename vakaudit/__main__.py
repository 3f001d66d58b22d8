"""``python -m vakaudit``."""

from vakaudit.cli import main

main()
