"""Compare a fresh home's baseline document with a committed one under a budget: one row per metric.

A row says what moved, from what to what, by how much, beyond which bound, and (for a headline
figure) which entry kind or artifact moved most. No I/O here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from vakaudit.findings import FindingCode, Severity
from vakaudit.gates.budget import Budget
from vakaudit.gates.record import HEADLINE_BREAKDOWNS
from vakaudit.schemas import schema_version


@dataclass(frozen=True, slots=True)
class CheckRow:
    """One compared metric. ``group`` is metrics, findings, undeclared_files, replay or readscale."""

    group: str
    metric: str
    baseline: Any
    current: Any
    change: str  # "+6.0%", "+2", "flat -> home", "" when unchanged
    bound: str  # "growth <= 5%", "<= 0", "no new code", ... ("" when nothing gates the row)
    passed: bool
    cause: str = ""  # what moved most, or what is new

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["status"] = "pass" if self.passed else "fail"
        del d["passed"]
        return d


@dataclass(frozen=True, slots=True)
class CheckResult:
    rows: list[CheckRow]

    @property
    def failed(self) -> list[CheckRow]:
        return [r for r in self.rows if not r.passed]

    @property
    def ok(self) -> bool:
        return not self.failed

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": schema_version("check"),
            "status": "pass" if self.ok else "fail",
            "checked": len(self.rows),
            "failed": len(self.failed),
            "rows": [r.to_dict() for r in self.rows],
        }


def compare(baseline: dict[str, Any], current: dict[str, Any], budget: Budget) -> CheckResult:
    """Every gated row of ``current`` against ``baseline`` (both from :func:`build_baseline`)."""
    from vakaudit.ledger.policy import CHAIN_BREAK_CODES

    rows: list[CheckRow] = []
    base_m, cur_m = baseline.get("metrics", {}), current.get("metrics", {})
    for name in sorted(set(base_m) | set(cur_m)):
        rows.extend(_metric_rows(name, base_m.get(name), cur_m.get(name), base_m, cur_m, budget))

    chain_now = sum(current["findings"].get(str(c), 0) for c in CHAIN_BREAK_CODES)
    chain_then = sum(baseline.get("findings", {}).get(str(c), 0) for c in CHAIN_BREAK_CODES)
    ceiling = budget.max_for("chain_findings")
    if ceiling is not None:
        rows.append(CheckRow("findings", "chain_findings", chain_then, chain_now, _delta(chain_then, chain_now),
                             f"<= {_num(ceiling)}", chain_now <= ceiling,
                             _codes_cause(current["findings"], CHAIN_BREAK_CODES)))  # fmt: skip

    base_f, cur_f = baseline.get("findings", {}), current["findings"]
    threshold = budget.new_findings_threshold()
    for code in sorted(set(base_f) | set(cur_f)):
        then, now = base_f.get(code, 0), cur_f.get(code, 0)
        sev = _severity(code)
        gate = threshold is not None and sev is not None and sev.rank >= threshold.rank
        rows.append(CheckRow("findings", f"findings.{code}", then, now, _delta(then, now),
                             f"<= {then} (baseline)" if gate else "", not gate or now <= then,
                             f"{sev} finding(s)" if gate and now > then else ""))  # fmt: skip

    then_u, now_u = set(baseline.get("undeclared_files", [])), set(current["undeclared_files"])
    new_u = sorted(now_u - then_u)
    gate = budget.rule("new_undeclared_files")
    ceiling = budget.max_for("undeclared_files")
    bounds = (["no new file"] if gate else []) + ([f"<= {_num(ceiling)}"] if ceiling is not None else [])
    rows.append(CheckRow("undeclared_files", "undeclared_files", len(then_u), len(now_u),
                         _delta(len(then_u), len(now_u)), ", ".join(bounds),
                         not (gate and new_u) and (ceiling is None or len(now_u) <= ceiling),
                         ("new: " + ", ".join(new_u)) if new_u else ""))  # fmt: skip

    base_r, cur_r = baseline.get("replay", {}), current["replay"]
    gate = budget.rule("replay_regressions")
    for check in sorted(set(base_r) | set(cur_r)):
        then = base_r.get(check, {}).get("fail", 0)
        now = cur_r.get(check, {}).get("fail", 0)
        rows.append(CheckRow("replay", f"replay.{check}", then, now, _delta(then, now),
                             f"failures <= {then} (baseline)" if gate else "", not gate or now <= then,
                             f"{now} failing step(s)" if now > then else ""))  # fmt: skip

    base_s, cur_s = baseline.get("readscale") or {}, current.get("readscale") or {}
    gate = budget.rule("no_home_class_reads")
    for read in sorted(cur_s):
        then, now = base_s.get(read), cur_s[read]
        became_home = now == "home" and then != "home"
        rows.append(CheckRow("readscale", f"readscale.{read}", then, now,
                             "" if then == now else f"{then} -> {now}", "not home-class" if gate else "",
                             not (gate and became_home)))  # fmt: skip

    rows.extend(_scorecard_rows(baseline.get("scorecard"), current.get("scorecard"), budget))
    return CheckResult(rows=rows)


def _metric_rows(name: str, then: Any, now: Any, base_m: dict, cur_m: dict, budget: Budget) -> list[CheckRow]:
    tol = budget.tolerance_for(name)
    ceiling = budget.max_for(name)
    if tol is None and ceiling is None:
        return []  # recorded, not gated
    bounds, ok = [], True
    if tol is not None:
        bounds.append(f"growth <= {tol:.0%}" if tol * 100 == round(tol * 100) else f"growth <= {tol:.2%}")
        if then is not None and now is not None:
            ok = now <= then * (1 + tol) if then else now <= 0
        elif then is not None:  # the figure vanished: nothing grew
            ok = True
        else:
            ok = now is None or now <= 0  # new figure where the baseline had none
    if ceiling is not None:
        bounds.append(f"<= {_num(ceiling)}")
        ok = ok and (now is None or now <= ceiling)
    cause = _cause(name, base_m, cur_m) if not ok else ""
    return [CheckRow("metrics", name, then, now, _change(then, now), ", ".join(bounds), ok, cause)]


def _severity(code: str) -> Severity | None:
    from vakaudit.ledger.policy import severity_of

    try:
        return severity_of(FindingCode(code))
    except ValueError:  # a code this vakaudit does not know (a baseline from a newer one)
        return None


def _cause(name: str, base_m: dict, cur_m: dict) -> str:
    """The breakdown entries of a headline figure that grew most, biggest first (at most three)."""
    parts = []
    for prefix in HEADLINE_BREAKDOWNS.get(name, ()):
        grown = []
        for key in set(base_m) | set(cur_m):
            if key.startswith(prefix):
                d = (cur_m.get(key) or 0) - (base_m.get(key) or 0)
                if d > 0:
                    grown.append((d, key))
        grown.sort(key=lambda t: (-t[0], t[1]))
        family = prefix.rstrip(".").rsplit(".", 1)[-1]  # kind / artifact
        for d, key in grown[:3]:
            parts.append(f"{family} {key[len(prefix):]} {_change(base_m.get(key), cur_m.get(key)) or f'+{_num(d)}'}")
    return "; ".join(parts)


def _codes_cause(findings: dict[str, int], codes: frozenset) -> str:
    return ", ".join(f"{c} {findings[c]}" for c in sorted(str(c) for c in codes) if findings.get(c))


def _change(then: Any, now: Any) -> str:
    if then is None or now is None:
        return "" if then == now else f"{_num(then)} -> {_num(now)}"
    if then == now:
        return ""
    if then == 0:
        return f"+{_num(now - then)}"
    return f"{(now - then) / abs(then):+.1%}"


def _delta(then: int, now: int) -> str:
    return "" if then == now else f"{now - then:+d}"


def _num(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def _scorecard_rows(then: Any, now: Any, budget: Budget) -> list[CheckRow]:
    """One row per data-baseline scorecard criterion of a 7.0 home: it fails when the fresh home's
    figure is beyond the criterion's bound (rule ``scorecard``), and a ``[tolerance]`` or ``[max]``
    key ``scorecard.<name>`` gates its figure against the baseline like any metric."""
    if not now:
        return []
    then = then or {}
    gate = budget.rule("scorecard")
    base_flat = {f"scorecard.{k}": (v or {}).get("figure") for k, v in then.items()}
    cur_flat = {f"scorecard.{k}": (v or {}).get("figure") for k, v in now.items()}
    rows = []
    for name in sorted(now):
        cur, base = now[name], then.get(name) or {}
        fig, was = cur.get("figure"), base.get("figure")
        failed = cur.get("status") == "fail"
        note = {"needs_keys": "needs --keys", "no_turns": "no turns"}.get(cur.get("status"), "")
        rows.append(CheckRow("scorecard", f"scorecard.{name}", was, fig, _change(was, fig),
                             f"<= {_num(cur.get('bound'))}" if gate else "", not (gate and failed),
                             f"beyond its bound {_num(cur.get('bound'))}" if failed else note))  # fmt: skip
        rows.extend(_metric_rows(f"scorecard.{name}", was, fig, base_flat, cur_flat, budget))
    return rows


__all__ = ["CheckResult", "CheckRow", "compare"]
