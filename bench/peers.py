"""Whole-process peers and floors for timing the vakaudit CLI with hyperfine (or /usr/bin/time -v).

    python bench/peers.py duckdb-verified HOME   # DuckDB's SHA-256-verified per-kind query (bench/scan.py's)
    python bench/peers.py sha256 HOME [--skip-secrets]
                                                  # SHA-256 of every regular file under HOME, 1 MiB reads

``sha256`` is the floor of ``vakaudit verify``: the bytes verify reads. Keyless verify of a 7.0 home
opens every file but the sealed credentials (``vak-home/credentials.enc``, sized, never opened:
checked with strace), hence ``--skip-secrets``.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def duckdb_verified(home: Path) -> None:
    import scan  # bench/scan.py

    out = scan.m_duckdb_verified(home, home)
    print(len(out["answer"]), out["broken"])


def sha256_floor(home: Path, skip_secrets: bool) -> None:
    n = 0
    for root, dirs, files in os.walk(home):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            if skip_secrets and name.endswith(".enc"):
                continue
            if not os.path.isfile(path) or os.path.islink(path):
                continue
            h = hashlib.sha256()
            with open(path, "rb", buffering=0) as f:
                while chunk := f.read(1 << 20):
                    h.update(chunk)
                    n += len(chunk)
    print(n)


if __name__ == "__main__":
    what, home = sys.argv[1], Path(sys.argv[2])
    if what == "duckdb-verified":
        duckdb_verified(home)
    elif what == "sha256":
        sha256_floor(home, "--skip-secrets" in sys.argv[3:])
    else:
        raise SystemExit(f"unknown peer {what!r}")
