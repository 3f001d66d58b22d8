"""Record a baseline: the figures of a home a CI gate compares, as one deterministic JSON document.

What is recorded (``docs/ci-gates.md`` describes every field):

- ``metrics``: per-turn figures, flat ``name -> number``: the headline ``bytes_per_turn``,
  ``entries_per_turn``, ``barriers_per_turn``, ``sidecar_bytes_per_turn``, and their breakdowns
  ``bytes_per_turn.kind.<entry kind>``, ``entries_per_turn.kind.<entry kind>``,
  ``bytes_per_turn.artifact.<artifact kind>``, ``barriers_per_turn.artifact.<artifact kind>``,
  ``sidecar_bytes_per_turn.artifact.<artifact kind>`` (the breakdowns name what caused a move);
- ``findings``: ``verify`` finding counts by code; ``undeclared_files``: their ``rel_path``\\ s;
- ``replay``: pass / fail / not_checkable counts per replay check;
- ``readscale``: read name -> class (flat / session / home), when a readscale result is stored in the
  scan directory (else null);
- ``scorecard``: the data-baseline scorecard figures of a 7.0 home; null until vakaudit reads 7.0
  homes (:func:`_scorecard`).

No absolute paths, no times, sorted keys: the same home gives the same bytes. Figures come from
:func:`vakaudit.analyze.analyze`, :func:`vakaudit.forensics.verify_home` and
:func:`vakaudit.replay.iter_requests`; nothing is measured here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from vakaudit.errors import LedgerError, UsageError
from vakaudit.names import shown
from vakaudit.schemas import schema_version

BASELINE_FORMAT = "vakaudit-baseline"

#: Headline figures and the breakdown families that explain them (metric -> breakdown prefixes).
HEADLINE_BREAKDOWNS: dict[str, tuple[str, ...]] = {
    "bytes_per_turn": ("bytes_per_turn.kind.", "bytes_per_turn.artifact."),
    "entries_per_turn": ("entries_per_turn.kind.",),
    "barriers_per_turn": ("barriers_per_turn.artifact.",),
    "sidecar_bytes_per_turn": ("sidecar_bytes_per_turn.artifact.",),
}


def build_baseline(
    home: str | os.PathLike, *, scan_out: str | os.PathLike | None = None, keys: Any = None
) -> dict[str, Any]:
    """Measure ``home`` and return its baseline document (JSON-ready, deterministic).

    ``scan_out``: where the scan goes (default: the scan engine's location); a readscale result stored
    there (``vakaudit readscale --out SCAN_DIR``) is recorded too. ``keys`` (a
    :class:`~vakaudit.storage.KeyRing`) unlocks a sealed 7.0 home, so its per-turn figures are measured.
    """
    from vakaudit.analyze import analyze
    from vakaudit.forensics import verify_home
    from vakaudit.scan import resolve_home

    root = resolve_home(home)
    analysis = analyze(root, scan_out=scan_out, keys=keys)
    report = verify_home(root, keys=keys)
    findings: dict[str, int] = {}
    undeclared: list[str] = []
    for f in report.findings:
        findings[f.code.value] = findings.get(f.code.value, 0) + 1
        if f.code.value == "undeclared_file" and f.rel_path:
            undeclared.append(shown(f.rel_path))
    return {
        "schema_version": schema_version("baseline"),
        "format": BASELINE_FORMAT,
        "layout": report.layout,
        "sessions": analysis.headline["sessions"],
        "turns": analysis.headline["turns"],
        "entries": analysis.headline["entries"],
        "metrics": dict(sorted(_metrics(analysis).items())),
        "findings": dict(sorted(findings.items())),
        "undeclared_files": sorted(set(undeclared)),
        "replay": _replay_counts(root),
        "readscale": _readscale_classes(analysis.readscale),
        "scorecard": _scorecard(analysis),
    }


def read_baseline(path: str | os.PathLike) -> dict[str, Any]:
    """Load a baseline file; raises :class:`UsageError` when it is not one."""
    p = Path(path).expanduser()
    try:
        doc = json.loads(p.read_bytes())
    except FileNotFoundError:
        raise UsageError(f"baseline file not found: {p}") from None
    except (OSError, ValueError) as exc:
        raise UsageError(f"{p} is not a readable baseline file: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != BASELINE_FORMAT or not isinstance(doc.get("metrics"), dict):
        raise UsageError(f"{p} is not a {BASELINE_FORMAT} file (make one with `vakaudit baseline HOME -o FILE`)")
    major = str(doc.get("schema_version", "")).split(".")[0]
    if major != schema_version("baseline").split(".")[0]:
        raise UsageError(
            f"{p} has baseline schema_version {doc.get('schema_version')!r}; this vakaudit reads "
            f"{schema_version('baseline')}: record it again with `vakaudit baseline`"
        )
    return doc


def _metrics(analysis: Any) -> dict[str, float | None]:
    from vakaudit.analyze.metrics import clean_value

    h = analysis.headline
    turns = h["turns"] or 0
    m = analysis.metrics

    def per_turn(value: float | int | None) -> float | None:
        return clean_value(value / turns) if turns and value is not None else None

    out: dict[str, float | None] = {
        "bytes_per_turn": h["bytes_per_turn"],
        "entries_per_turn": h["entries_per_turn"],
        "barriers_per_turn": h["barriers_per_turn"],
    }
    for r in m["ledger_bytes_by_kind"].rows:
        out[f"bytes_per_turn.kind.{r['kind']}"] = per_turn(r["size_bytes"])
        out[f"entries_per_turn.kind.{r['kind']}"] = per_turn(r["entry_count"])
    for r in m["disk_by_kind"].rows:
        out[f"bytes_per_turn.artifact.{r['kind']}"] = per_turn(r["size_bytes"])
    for r in m["barriers_per_turn"].rows:
        out[f"barriers_per_turn.artifact.{r['artifact']}"] = r["barriers_per_turn"]
    sidecar = 0.0
    for r in m["sidecar_growth"].rows:
        out[f"sidecar_bytes_per_turn.artifact.{r['artifact']}"] = r["bytes_per_turn"]
        sidecar += r["bytes_per_turn"] or 0.0
    out["sidecar_bytes_per_turn"] = clean_value(sidecar) if turns else None
    return out


def _replay_counts(root: Path) -> dict[str, dict[str, int]]:
    from vakaudit.replay import iter_ledger_paths, iter_requests
    from vakaudit.replay.checks import CHECK_NAMES

    counts = {name: {"pass": 0, "fail": 0, "not_checkable": 0} for name in CHECK_NAMES}
    for path in iter_ledger_paths(root):
        try:
            for step in iter_requests(path):
                for c in step.checks:
                    counts[c.name][str(c.status)] += 1
        except LedgerError:  # not replayable: verify's findings already count the defect
            continue
    return dict(sorted(counts.items()))


def _readscale_classes(stored: dict[str, Any] | None) -> dict[str, str] | None:
    if stored is None:
        return None
    return {r["name"]: r["read_class"] for r in sorted(stored["reads"], key=lambda r: r["name"])}


def _scorecard(analysis: Any) -> dict[str, Any] | None:
    """The data-baseline scorecard of a 7.0 home (layout g3): per criterion its figure, bound and
    status (:mod:`vakaudit.analyze.scorecard`); None for a JSONL-era home, whose scorecard is an
    as-is comparison rather than a gate."""
    card = analysis.scorecard
    if card is None or card.layout != "g3":
        return None
    return {
        c.name: {"figure": c.figure, "bound": c.bound, "status": str(c.status)}
        for c in sorted(card.criteria, key=lambda c: c.name)
    }


__all__ = ["BASELINE_FORMAT", "HEADLINE_BREAKDOWNS", "build_baseline", "read_baseline"]
