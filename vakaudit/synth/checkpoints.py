"""G1 workspace checkpoints: ``checkpoints/<session_id>/NNNN.json`` with base64 file contents.

Written like vak's ``checkpoints::store`` (home.md §5.1): compact JSON into ``.NNNN.tmp``, rename,
no fsync, then prune the directory to the newest 20 by seq. The synthetic workspace is a list of
files cut from the content corpus; between two checkpoints a few files change.
"""

from __future__ import annotations

import base64
import os
import random
from pathlib import Path

from vakaudit.ledger.jsonenc import dumps
from vakaudit.synth.content import ContentPools

__all__ = ["Workspace", "store_checkpoint", "MAX_STORED_CHECKPOINTS"]

MAX_STORED_CHECKPOINTS = 20
_DIRS = ("src", "src/core", "src/cli", "tests", "docs", "scripts", "crates/vak-core/src", "web/app")
_EXTS = ("rs", "py", "ts", "md", "toml", "json", "txt")
_SECRETS = (".env", "deploy.pem", "credentials.json")


class Workspace:
    """A synthetic workspace of about ``total_bytes`` bytes of file content."""

    def __init__(self, pools: ContentPools, rng: random.Random, total_bytes: int) -> None:
        self._pools = pools
        self._rng = rng
        self.files: dict[str, str] = {}  # rel_path -> base64 content
        remaining = max(200, total_bytes)
        n = 0
        while remaining > 0:
            size = min(remaining, max(120, int(rng.lognormvariate(9.6, 1.0))), 1_000_000)
            rel = f"{rng.choice(_DIRS)}/{pools.words(rng, 1)}_{n}.{rng.choice(_EXTS)}"
            self.files[rel] = self._encode(size)
            remaining -= size
            n += 1
        self.ignored = [f"target/debug/build-{i}.o" for i in range(3)] + list(_SECRETS)

    def _encode(self, size: int) -> str:
        text = self._pools.slice(self._rng, size)
        return base64.b64encode(text.encode("utf-8")).decode("ascii")

    def touch(self) -> None:
        """Change one to three files, as a turn with an effect would."""
        names = sorted(self.files)
        for rel in self._rng.sample(names, k=min(len(names), self._rng.randint(1, 3))):
            raw_len = len(self.files[rel]) * 3 // 4
            self.files[rel] = self._encode(max(80, int(raw_len * self._rng.uniform(0.9, 1.15))))


def store_checkpoint(
    sessions_home: Path, session_id: str, seq: int, created_at: str, label: str, workspace: Workspace
) -> Path:
    """Write checkpoint ``seq`` and prune to the newest 20; return the final path."""
    directory = sessions_home / "checkpoints" / session_id
    directory.mkdir(parents=True, exist_ok=True)
    observed = sorted(set(workspace.files) | set(workspace.ignored))
    name = f"{seq:04d}.json"
    tmp = directory / f".{seq:04d}.tmp"
    with open(tmp, "wb") as fh:  # the compact JSON of the document, streamed file by file
        head = {"seq": seq, "session_id": session_id, "created_at": created_at, "label": label}
        fh.write(dumps(head)[:-1] + b',"files":[')
        for i, rel in enumerate(sorted(workspace.files)):
            fh.write((b"," if i else b"") + dumps({"rel_path": rel, "content": workspace.files[rel]}))
        fh.write(b'],"observed":' + dumps(observed) + b"}")
    final = directory / name
    os.replace(tmp, final)
    stored = sorted((int(p.stem), p) for p in directory.iterdir() if p.suffix == ".json" and p.stem.isdigit())
    for _, old in stored[:-MAX_STORED_CHECKPOINTS]:
        old.unlink()
    return final
