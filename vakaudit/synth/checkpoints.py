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
    """A synthetic workspace of about ``total_bytes`` bytes of file content.

    A file is held as where its text lies in the shared corpus, not as its content: a checkpointing
    session's workspace reaches ``checkpoint_file_max_bytes`` (about 15 MB of files, 20 MB as
    base64), which the generator would otherwise keep for the whole session. The base64 text is
    made again, file by file, when a checkpoint is written.
    """

    def __init__(self, pools: ContentPools, rng: random.Random, total_bytes: int) -> None:
        self._pools = pools
        self._rng = rng
        # rel_path -> (start, end) of its text in the corpus, length of its base64 content
        self.files: dict[str, tuple[int, int, int]] = {}
        remaining = max(200, total_bytes)
        n = 0
        while remaining > 0:
            size = min(remaining, max(120, int(rng.lognormvariate(9.6, 1.0))), 1_000_000)
            rel = f"{rng.choice(_DIRS)}/{pools.words(rng, 1)}_{n}.{rng.choice(_EXTS)}"
            self.files[rel] = self._draw(size)
            remaining -= size
            n += 1
        self.ignored = [f"target/debug/build-{i}.o" for i in range(3)] + list(_SECRETS)

    def _draw(self, size: int) -> tuple[int, int, int]:
        start, end = self._pools.slice_bounds(self._rng, size)
        utf8_len = len(self._pools.corpus[start:end].encode("utf-8"))
        return start, end, 4 * ((utf8_len + 2) // 3)

    def content(self, rel: str) -> str:
        """The base64 content of file ``rel``, as a checkpoint stores it."""
        start, end, _ = self.files[rel]
        return base64.b64encode(self._pools.corpus[start:end].encode("utf-8")).decode("ascii")

    def touch(self) -> None:
        """Change one to three files, as a turn with an effect would."""
        names = sorted(self.files)
        for rel in self._rng.sample(names, k=min(len(names), self._rng.randint(1, 3))):
            raw_len = self.files[rel][2] * 3 // 4
            self.files[rel] = self._draw(max(80, int(raw_len * self._rng.uniform(0.9, 1.15))))


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
            fh.write((b"," if i else b"") + dumps({"rel_path": rel, "content": workspace.content(rel)}))
        fh.write(b'],"observed":' + dumps(observed) + b"}")
    final = directory / name
    os.replace(tmp, final)
    stored = sorted((int(p.stem), p) for p in directory.iterdir() if p.suffix == ".json" and p.stem.isdigit())
    for _, old in stored[:-MAX_STORED_CHECKPOINTS]:
        old.unlink()
    return final
