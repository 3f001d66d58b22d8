"""Append-only JSONL side ledgers of a synthetic home, written the way vak writes them.

Rows are serialized with the ledger's serde_json-compatible encoder. Files are opened lazily and
kept open (the bytes are the same as vak's open-append-close per row, without the syscalls). The
cost log applies vak's 5 MiB / 90-day compaction on append; budget alerts their 1 MiB / 2,000-row
bound.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from vakaudit.ledger.ids import parse_ts
from vakaudit.ledger.jsonenc import dumps

__all__ = ["pretty_json", "write_file", "JsonlSink", "CostLogSink", "BudgetAlertSink", "COST_LOG_COMPACT_THRESHOLD_BYTES"]

COST_LOG_COMPACT_THRESHOLD_BYTES = 5 * 1024 * 1024
COST_LOG_RETENTION_DAYS = 90
ALERTS_COMPACT_THRESHOLD_BYTES = 1024 * 1024
ALERTS_RETENTION_ROWS = 2000
_DAY_NS = 86_400 * 1_000_000_000


def pretty_json(value: Any) -> str:
    """serde_json's pretty printer layout (two-space indent, ``": "``); no floats are passed here."""
    return json.dumps(value, indent=2, ensure_ascii=False)


def write_file(path: Path, data: str | bytes) -> None:
    """Write a whole file (its folder created), text as UTF-8."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)


class JsonlSink:
    """One JSONL file: one compact JSON object plus LF per row."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh = None
        self.size = 0
        self.rows = 0

    def _open(self):
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.path, "ab", buffering=1 << 16)  # noqa: SIM115 - closed in close()
            self.size = self._fh.tell()
        return self._fh

    def append(self, row: dict[str, Any]) -> None:
        self.append_raw(dumps(row))

    def append_raw(self, line: bytes) -> None:
        fh = self._open()
        fh.write(line)
        fh.write(b"\n")
        self.size += len(line) + 1
        self.rows += 1

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


class CostLogSink(JsonlSink):
    """``cost-log.jsonl`` with FinOpsLedger's compaction: when the file has reached 5 MiB, keep only
    rows younger than 90 days (``.compact.tmp`` then rename), then append."""

    compactions = 0

    def append_at(self, row: dict[str, Any], now_ns: int) -> None:
        if self.size >= COST_LOG_COMPACT_THRESHOLD_BYTES:
            self._compact(now_ns)
        self.append(row)

    def _compact(self, now_ns: int) -> None:
        self.close()
        cutoff = now_ns - COST_LOG_RETENTION_DAYS * _DAY_NS
        tmp = self.path.with_name(self.path.name + ".compact.tmp")
        kept = 0
        with open(self.path, "rb") as src, open(tmp, "wb") as dst:
            for line in src:
                body = line.rstrip(b"\n")
                ts_at = body.find(b'"ts":"')
                try:
                    ts = body[ts_at + 6 : body.index(b'"', ts_at + 6)].decode()
                    if parse_ts(ts) < cutoff:
                        continue
                except ValueError:
                    continue  # a row the reader cannot parse is dropped by the rewrite
                dst.write(body + b"\n")
                kept += 1
        os.replace(tmp, self.path)
        self.compactions += 1
        self.rows = kept


class BudgetAlertSink(JsonlSink):
    """``budget-alerts.jsonl``: past 1 MiB only the last 2,000 lines are kept."""

    def append(self, row: dict[str, Any]) -> None:
        if self.size >= ALERTS_COMPACT_THRESHOLD_BYTES:
            self.close()
            lines = self.path.read_bytes().splitlines()[-ALERTS_RETENTION_ROWS:]
            tmp = self.path.with_name(self.path.name + ".compact.tmp")
            tmp.write_bytes(b"".join(line + b"\n" for line in lines))
            os.replace(tmp, self.path)
        super().append(row)
