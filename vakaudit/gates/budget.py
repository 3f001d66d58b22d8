"""The budget of ``vakaudit check``: per-metric growth tolerances, absolute ceilings and rules (TOML).

:data:`DEFAULT_BUDGET_TOML` is the documented default, verbatim; a budget file overrides any key of
it and leaves the rest. Parsing only; no I/O but reading the one file named.
"""

from __future__ import annotations

import fnmatch
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from vakaudit.errors import UsageError
from vakaudit.findings import Severity

DEFAULT_BUDGET_TOML = """\
# vakaudit check budget: every key is optional; these are the defaults.

[tolerance]
# How much a per-turn figure may GROW relative to the baseline (0.05 = 5 %); a figure that shrinks
# never fails. Keys are metric names as in the baseline's "metrics"; shell-style patterns
# ("bytes_per_turn.kind.*") apply to every metric they match, and an exact name wins over a pattern.
# A metric with no tolerance here is still recorded and names the cause of a move, but is not gated.
bytes_per_turn = 0.05
entries_per_turn = 0.05
barriers_per_turn = 0.05
sidecar_bytes_per_turn = 0.05

[max]
# Absolute ceilings on the fresh home, whatever the baseline says: any metric name (or pattern),
# plus "chain_findings" (prev_hash_mismatch + line_modified + lines_reordered findings) and
# "undeclared_files". For example: barriers_per_turn = 14
chain_findings = 0

[rules]
new_findings = "warning"     # a verify finding code of at least this severity (info, warning, error,
                             # critical; false: none) counted more often than in the baseline fails
new_undeclared_files = true  # an undeclared file the baseline did not list fails
replay_regressions = true    # a replay check failing more often than in the baseline fails
no_home_class_reads = true   # a read that becomes home-class in the readscale result fails
scorecard = true             # a data-baseline scorecard criterion (7.0 homes) that fails its bound fails
"""

_RULES = ("new_findings", "new_undeclared_files", "replay_regressions", "no_home_class_reads", "scorecard")


@dataclass(frozen=True, slots=True)
class Budget:
    """Parsed budget: ``tolerance`` and ``max`` map metric names or patterns to numbers."""

    tolerance: dict[str, float] = field(default_factory=dict)
    max: dict[str, float] = field(default_factory=dict)
    rules: dict[str, bool | str] = field(default_factory=dict)

    def tolerance_for(self, metric: str) -> float | None:
        return _lookup(self.tolerance, metric)

    def max_for(self, metric: str) -> float | None:
        return _lookup(self.max, metric)

    def rule(self, name: str) -> bool:
        return bool(self.rules[name])

    def new_findings_threshold(self) -> Severity | None:
        """The least severity whose new findings fail (None: new findings never fail)."""
        value = self.rules["new_findings"]
        return Severity(value) if isinstance(value, str) else None


def _lookup(table: dict[str, float], metric: str) -> float | None:
    if metric in table:
        return table[metric]
    matches = [v for k, v in sorted(table.items()) if any(c in k for c in "*?[") and fnmatch.fnmatchcase(metric, k)]
    return min(matches) if matches else None


def parse_budget(text: str, *, source: str = "budget") -> Budget:
    """A budget from TOML text layered over the defaults; raises :class:`UsageError` when invalid."""
    defaults = tomllib.loads(DEFAULT_BUDGET_TOML)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{source} is not valid TOML: {exc}") from None
    unknown = set(doc) - set(defaults)
    if unknown:
        raise UsageError(f"{source}: unknown section(s) {', '.join(sorted(unknown))}; known: tolerance, max, rules")
    tables: dict[str, dict] = {}
    for section in ("tolerance", "max"):
        merged = dict(defaults[section])
        for key, value in doc.get(section, {}).items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise UsageError(f"{source}: [{section}] {key} must be a non-negative number, not {value!r}")
            merged[key] = float(value)
        tables[section] = merged
    rules = dict(defaults["rules"])
    for key, value in doc.get("rules", {}).items():
        if key not in _RULES:
            raise UsageError(f"{source}: unknown rule {key!r}; known: {', '.join(_RULES)}")
        if key == "new_findings":
            if value is True:
                value = Severity.INFO.value
            if value is not False and value not in {s.value for s in Severity}:
                names = ", ".join(s.value for s in Severity)
                raise UsageError(f"{source}: [rules] new_findings must be one of {names} or false, not {value!r}")
        elif not isinstance(value, bool):
            raise UsageError(f"{source}: [rules] {key} must be true or false, not {value!r}")
        rules[key] = value
    return Budget(tolerance=tables["tolerance"], max=tables["max"], rules=rules)


def load_budget(path: str | os.PathLike | None) -> Budget:
    """The budget in ``path`` over the defaults (None: the defaults)."""
    if path is None:
        return parse_budget("", source="default budget")
    p = Path(path).expanduser()
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"budget file not found: {p}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{p} is not a readable budget file: {exc}") from None
    return parse_budget(text, source=str(p))


__all__ = ["DEFAULT_BUDGET_TOML", "Budget", "load_budget", "parse_budget"]
