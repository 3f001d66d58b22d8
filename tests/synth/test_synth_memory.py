"""The generator's memory does not follow the size of what it writes.

Measured with tracemalloc (Python allocations, deterministic for a given build), never with time or
with the resident set size of a shared machine. Before these bounds held, a session kept every
capability binding it wrote twice (line bytes in the ledger handle, decoded tree in the request
builder) and a checkpointing session kept its whole workspace as base64 text, so the peak of a
100,000-turn home followed its longest session and its largest workspace.
"""

from __future__ import annotations

import base64
import json
import random
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

CHILD = r"""
import json, sys, tempfile, tracemalloc
from pathlib import Path
from vakaudit.synth import build_one_session
out = []
for turns in map(int, sys.argv[1:]):
    with tempfile.TemporaryDirectory() as d:
        tracemalloc.start()
        ledger = build_one_session(Path(d) / "home", app_version="4.0.0", turns=turns, seed=0)
        out.append({"ledger_bytes": ledger.stat().st_size, "peak_bytes": tracemalloc.get_traced_memory()[1]})
        tracemalloc.stop()
print(json.dumps(out))
"""


@pytest.mark.slow
def test_a_session_four_times_longer_costs_less_than_half_its_extra_bytes() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, "30", "120"], capture_output=True, text=True, check=True, timeout=600
    )
    short, long = json.loads(proc.stdout.strip().splitlines()[-1])
    extra_bytes = long["ledger_bytes"] - short["ledger_bytes"]
    # 90 more turns of ~48 KB capability bindings and their tool results: megabytes, so the bound
    # below is far from allocator noise
    assert extra_bytes > 4_000_000
    # each written binding held twice over would cost several times extra_bytes
    assert long["peak_bytes"] - short["peak_bytes"] < extra_bytes / 2, (short, long)


def test_a_large_workspace_is_held_as_corpus_ranges(tmp_path: Path) -> None:
    from vakaudit.synth.checkpoints import Workspace, store_checkpoint
    from vakaudit.synth.content import ContentPools

    pools = ContentPools(0, corpus_bytes=400_000)
    total = 15_000_000  # the measured profile's largest workspace (checkpoint_file_max_bytes * 3/4)
    tracemalloc.start()
    try:
        ws = Workspace(pools, random.Random(3), total)
        held, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        path = store_checkpoint(tmp_path, "s-1", 1, "2026-08-01T08:00:00Z", "label", ws)
        _, writing_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert path.stat().st_size > total  # every file is in the checkpoint, as base64
    assert held < total // 20  # not the files' contents (~20 MB of base64 before)
    assert writing_peak < total // 2  # streamed file by file, never the whole ~20 MB document
    doc = json.loads(path.read_bytes())
    assert [f["rel_path"] for f in doc["files"]] == sorted(ws.files)
    for f in doc["files"][:50]:
        text = base64.b64decode(f["content"], validate=True).decode("utf-8")
        assert text and text in pools.corpus
