"""Rows of every side artifact of a synthetic home, in each one's exact row format (home.md §4–§10).

:class:`SideState` receives the per-turn events from the session writer (intent reading, dispatch
settlements, tool runs, bash executions, approvals, remember calls) and writes the matching side
ledger rows; :meth:`SideState.finish` writes the documents and configuration files whose size
follows configuration rather than usage. G2-layout homes add ``trace``/``actor`` to ledger rows.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from vakaudit.ledger.ids import format_ts
from vakaudit.ledger.jsonenc import dumps
from vakaudit.ledger.keys import fnv1a64, workspace_key
from vakaudit.synth.clock import ts_plus00
from vakaudit.synth.profiles import LOCAL_PROVIDERS, MODELS
from vakaudit.synth.sinks import JsonlSink, pretty_json, write_file

if TYPE_CHECKING:
    from vakaudit.synth.events import HomeFacts, SideSinks

__all__ = ["SideState", "pretty_json"]

_DAY_NS = 86_400 * 1_000_000_000


def inbox_id(ts_plus: str, kind: str, title: str) -> str:
    return f"{fnv1a64(f'{ts_plus}|{kind}|{title}'.encode()):016x}"


class SideState:
    """Side-ledger writer and the little state it needs (day budget, open incidents, …)."""

    def __init__(self, home: HomeFacts, sinks: SideSinks) -> None:
        self.home = home
        self.sinks = sinks
        self.rng = random.Random(f"side:{home.seed}")
        self.session_plan = None
        self.day = -1
        self.day_total = 0.0
        self.day_alerted: set[str] = set()
        self.unacked: list[str] = []
        self.open_incident: dict | None = None
        self.commitment: dict | None = None
        self.memory_notes = 0
        self.sessions_seen: list[tuple[str, str]] = []  # (session_id, cwd), first 200 only
        self.scheduled: list[tuple[str, str, str]] = []  # (task id, session id, cwd), first 50 only
        self.delivered_jobs = 0
        self.telegram_chat = "telegram:483920117"
        self.exec_seq = 0

    @property
    def clock(self):
        return self.home.clock

    def _trace(self, row: dict, sw: Any, turn: int | None = None) -> dict:
        return self.home.with_trace(row, sw, turn)

    def begin(self, plans: list) -> None:
        pass

    # -- per turn -----------------------------------------------------------------------------------

    def intent_row(self, sw: Any, act: str, stakes: str, tier: str) -> None:
        rng = self.rng
        outcome = rng.choices(("held", "restated", "overridden", "abandoned"), weights=(85, 6, 4, 5))[0]
        row: dict[str, Any] = {
            "ts": self.clock.ts(),
            "act": act,
            "stakes": stakes,
            "tier": tier,
            "resolver_version": 3,
            "outcome": outcome,
        }
        if self.home.layout == "g2":
            row["sliced"] = False
        self.sinks.intent_ev.append(self._trace(row, sw))
        if rng.random() < 0.04:
            esc: dict[str, Any] = {
                "ts": self.clock.ts(),
                "act": act,
                "stakes": stakes,
                "tier": tier,
                "resolver_version": 3,
                "outcome": "escalated",
                "wanted": "bash",
            }
            if self.home.layout == "g2":
                esc["sliced"] = rng.random() < 0.7
            self.sinks.intent_ev.append(self._trace(esc, sw))

    def approval(self, sw: Any, tool: str, denied: bool) -> None:
        if denied or (sw.spec.forced and not self.sinks.security.rows):
            row = {
                "ts": self.clock.ts(),
                "kind": "permission_denial",
                "label": "permission_denied",
                "detail": f"tool={tool} workspace={sw.spec.cwd} mode=ask",
            }
            self.sinks.security.append(self._trace(row, sw))
        elif self.rng.random() < 0.3:
            self._inbox(sw, "approval_pending", f"Approve {tool}?", f"{tool} wants to run in {sw.spec.cwd}")

    def sandbox_events(self, sw: Any, sink: JsonlSink, command: str, output: str, is_error: bool) -> int:
        """One bash execution's SandboxEvents; returns its duration in ms."""
        rng = self.rng
        prof = self.home.profile
        self.exec_seq += 1
        long_run = rng.random() < prof.long_command_rate
        duration = (
            int(rng.uniform(60_000, 900_000)) if long_run else int(min(60_000, rng.lognormvariate(7.2, 1.0)))
        )
        sink.append(
            {
                "kind": "ExecutionStarted",
                "tool": "bash",
                "code_preview": command[:2000],
                "language": "bash",
                "scratch_dir": f"/tmp/vak-scratch/{sw.spec.session_id}/{self.exec_seq}",
            }
        )
        if command.startswith("pytest") and rng.random() < 0.2:
            sink.append({"kind": "PackageInstalled", "packages": ["pytest==8.3.3"]})
        stream = output
        if long_run:  # a long command streams far more than the model is shown
            stream = output + "\n" + self.home.pools.slice(rng, duration // 8)
        chunks = [stream[i : i + 8192] for i in range(0, len(stream), 8192)] or []
        telemetry = sw.gen != "g1"  # the oldest sandbox build wrote no telemetry
        ticks = duration // 500 if telemetry else 0
        per_tick = max(1, ticks // max(1, len(chunks))) if ticks else 0
        ci = 0
        for tick in range(1, ticks + 1):
            sink.append(
                {
                    "kind": "ProcessTelemetry",
                    "elapsed_ms": tick * 500,
                    "cpu_percent": round(rng.uniform(0.5, 180.0), 1),
                    "memory_bytes": rng.randrange(8_000_000, 900_000_000),
                }
            )
            if ci < len(chunks) and tick % per_tick == 0:
                sink.append({"kind": "Stdout", "chunk": chunks[ci]})
                ci += 1
        for chunk in chunks[ci:]:
            sink.append({"kind": "Stdout", "chunk": chunk})
        if is_error:
            sink.append({"kind": "Stderr", "chunk": "error: command failed\n"})
        artifacts = []
        if rng.random() < 0.05:
            path = f"/tmp/vak-scratch/{sw.spec.session_id}/{self.exec_seq}/report.html"
            size = rng.randrange(2000, 90_000)
            sink.append(
                {"kind": "ArtifactGenerated", "path": path, "mime_type": "text/html", "size_bytes": size}
            )
            artifacts.append(path)
        exit_code = 1 if is_error or output.endswith("exit code: 1") else 0
        sink.append(
            {
                "kind": "ExecutionFinished",
                "exit_code": exit_code,
                "duration_ms": duration,
                "artifacts": artifacts,
            }
        )
        return duration

    def remember(self, sw: Any, inp: dict) -> None:
        path = self.home.agent / "memory" / workspace_key(sw.spec.cwd) / "MEMORY.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        block = f"## {ts_plus00(self.clock.ns)} [{inp['kind']}] tag={inp['tag']} session={sw.spec.session_id}\n{inp['text']}\n\n"
        with open(path, "ab") as fh:
            fh.write(block.encode("utf-8"))
        self.memory_notes += 1

    def tool_row(self, sw: Any, tool: str, tool_use_id: str, ok: bool, duration_ms: int) -> None:
        if self.rng.random() >= 0.6:
            return
        row: dict[str, Any] = {
            "ts": self.clock.ts(),
            "kind": "mcp" if tool.startswith("mcp__") else "tool",
            "name": tool,
            "success": ok,
            "duration_ms": duration_ms,
            "session_id": sw.spec.session_id,
        }
        if self.home.layout == "g2":
            row["tool_use_id"] = tool_use_id
        self._activity_sink(sw).append(self._trace(row, sw))

    def _activity_sink(self, sw: Any) -> JsonlSink:
        return self.sinks.activity_root if sw.spec.surface == "telegram" else self.sinks.activity_log

    def settle(self, sw: Any, turn: Any) -> None:
        """Routing evidence, activity-log dispatch rows and cost rows of a finished run.

        Routing evidence: one row per attempt leg (home.md §4.1), so retries and fallbacks add rows.
        Activity log: one ``provider`` row per dispatch (§4.4). Cost log: one row per settled paid
        dispatch (§4.2), with that dispatch's usage; a dispatch to a local model (``ollama``) is not
        paid and writes none (unconfirmed in vak: the spend gate is only consulted for remote
        providers), a remote model without a known price writes its row without ``usd``.
        """
        home = self.home
        ts = self.clock.ts()
        usd = 0.0

        cost_sink = self.sinks.cost_root if sw.spec.surface == "telegram" else self.sinks.cost
        for provider, model, usage, attempts in turn.receipts:
            for a in attempts:
                outcome = {"ok": "success", "failed": "failure", "unknown": "unknown"}.get(a["settlement"])
                if outcome is None:
                    continue
                leg_provider = a.get("provider", provider)
                leg_model = a.get("model", model)
                self.sinks.routing.append(
                    self._trace(
                        {
                            "ts": ts,
                            "provider": leg_provider,
                            "model": leg_model,
                            "outcome": outcome,
                            "latency_ms": a["latency_ms"],
                        },
                        sw,
                    )
                )
            row: dict[str, Any] = {
                "ts": ts,
                "kind": "provider",
                "name": f"{provider}/{model}",
                "success": True,
                "duration_ms": attempts[-1]["latency_ms"],
                "session_id": sw.spec.session_id,
            }
            self._activity_sink(sw).append(self._trace(row, sw))
            if provider in LOCAL_PROVIDERS:
                continue
            cost: dict[str, Any] = {
                "ts": ts,
                "model": model,
                "provider": provider,
                "input_tokens": usage["input_tokens"],
                "output_tokens": usage["output_tokens"],
            }
            if usage.get("cache_read_input_tokens"):
                cost["cache_read_input_tokens"] = usage["cache_read_input_tokens"]
            price = MODELS.get(provider, (None, None, None))
            if price[1] is not None:
                one = usage["input_tokens"] * price[1] + usage["output_tokens"] * price[2]
                cost["usd"] = round(one, 6)
                usd += one
            cost["source"] = "estimated"
            cost["session_id"] = sw.spec.session_id
            cost_sink.append_at(self._trace(cost, sw), self.clock.ns)
        if not turn.receipts:
            return
        rng = self.rng
        # day budget: alerts at 80% and 100% of the day cap, once per day
        day = self.clock.ns // _DAY_NS
        if day != self.day:
            self.day, self.day_total, self.day_alerted = day, 0.0, set()
        self.day_total += usd
        cap = home.profile.day_cap_usd
        for level, share in (("eighty", 0.8), ("full", 1.0)):
            if self.day_total >= cap * share and level not in self.day_alerted:
                self.day_alerted.add(level)
                self.sinks.alerts.append(
                    {
                        "kind": "budget_alert",
                        "ts": ts,
                        "level": level,
                        "day_total_usd": round(self.day_total, 2),
                        "session_id": sw.spec.session_id,
                    }
                )
                self._inbox(
                    sw,
                    "budget_alert",
                    f"Daily budget {level}",
                    f"${self.day_total:.2f} of ${cap:.2f} spent today",
                )
        if sw.spec.surface == "telegram" and turn.final_text:
            self._delivery(sw, "assistant", turn.final_text)
        if rng.random() < 0.01:
            row = {
                "ts": ts,
                "kind": "permission_capped",
                "label": "permission_capped",
                "detail": f"workspace={sw.spec.cwd} requested=full-access capped_to=ask",
            }
            self.sinks.security.append(self._trace(row, sw))

    def after_turn(self, sw: Any, t: int) -> None:
        rng = self.rng
        forced = bool(sw.spec.forced)
        if self.unacked and rng.random() < 0.3:
            self.sinks.inbox.append({"ack_of": self.unacked.pop(0), "ts": self.clock.ts()})
        if rng.random() < 0.004 or (forced and t == 0 and self.open_incident is None):
            self._incident("opened")
        elif self.open_incident is not None and (rng.random() < 0.05 or (forced and t == 1)):
            self._incident("resolved" if rng.random() < 0.5 or forced else "observed")
        if rng.random() < 0.002 or (forced and t == 0):
            self._security_root()
        if rng.random() < 0.003 or (forced and t == 0 and self.commitment is None):
            self._commitment(sw)

    def after_session(self, sw: Any, res: Any) -> None:
        if sw.spec.parent_session_id:
            return
        if len(self.sessions_seen) < 200:
            self.sessions_seen.append((sw.spec.session_id, sw.spec.cwd))
        plan = self.session_plan
        if plan is not None and plan.scheduled:
            task_id = f"t-{self.home.ids.hex(6)}"
            if len(self.scheduled) < 50:
                self.scheduled.append((task_id, sw.spec.session_id, sw.spec.cwd))
            self._inbox(
                sw,
                "task_summary",
                "Scheduled task finished",
                self.home.pools.sentence(self.rng),
                task_id=task_id,
            )
            self._delivery(
                sw, "task_summary", "Digest ready", job_id=f"task/{task_id}/{self.clock.ts()[:10]}"
            )
        if self.commitment is not None and self.rng.random() < 0.5:
            self._commitment_episode(sw)

    # -- helpers ------------------------------------------------------------------------------------

    def _inbox(self, sw: Any, kind: str, title: str, body: str, *, task_id: str | None = None) -> None:
        ts_ns = self.clock.ns
        entry_id = inbox_id(ts_plus00(ts_ns), kind, title)
        self.sinks.inbox.append(
            {
                "id": entry_id,
                "ts": format_ts(ts_ns),
                "kind": kind,
                "title": title,
                "body": body,
                "session_id": sw.spec.session_id if sw else None,
                "task_id": task_id,
                "result_id": None,
                "dedupe_key": f"{kind}:{task_id}" if task_id else None,
            }
        )
        self.unacked.append(entry_id)
        self.unacked = self.unacked[-100:]

    def _delivery(self, sw: Any, kind: str, text: str, *, job_id: str | None = None) -> None:
        home = self.home
        rng = self.rng
        job_id = job_id or f"gw/{sw.spec.session_id}/{home.ids.hex(8)}"
        target = self.telegram_chat
        created = self.clock.ms
        profile = {
            "surface": "telegram",
            "markup": "telegram_html",
            "max_chars": 4096,
            "supports_tables": False,
            "supports_code_blocks": True,
            "supports_links": True,
            "supports_actions": True,
            "template": None,
            "posture": "concise",
        }
        job = {
            "job_id": job_id,
            "target": target,
            "kind": kind,
            "content": {"type": "text", "markdown": text[:3000]},
            "profile": profile,
        }
        record = {
            "schema_version": 1,
            "job": job,
            "state": "pending",
            "attempts": 0,
            "created_at_ms": created,
            "updated_at_ms": created,
            "packet": None,
            "last_error": None,
        }
        lines = [dumps(record)]
        dead = rng.random() < 0.03
        if dead:
            record = dict(
                record,
                state="dead_letter",
                attempts=5,
                updated_at_ms=created + 600_000,
                last_error="telegram: 403 Forbidden: bot was blocked by the user",
            )
        else:
            chunks = [text[i : i + 4096] for i in range(0, min(len(text), 3000), 4096)]
            packet = {
                "schema_version": 1,
                "job_id": job_id,
                "target": target,
                "surface": "telegram",
                "kind": kind,
                "payload": {"type": "text", "value": text[:3000]},
                "fallback_markdown": text[:3000],
                "chunks": chunks,
                "actions": [],
                "coverage": [],
                "diagnostics": [],
            }
            record = dict(
                record,
                state="delivered",
                attempts=1,
                updated_at_ms=created + rng.randrange(300, 4000),
                packet=packet,
            )
        lines.append(dumps(record))
        path = home.data / "delivery" / "jobs" / f"{job_id.encode().hex()}.json"
        write_file(path, b"".join(line + b"\n" for line in lines))
        self.sinks.deliveries.append(
            {"ts": self.clock.ts(), "job_id": job_id, "target": target, "state": record["state"]}
        )
        self.delivered_jobs += 1

    def _incident(self, event: str) -> None:
        home = self.home
        ts = self.clock.ts()
        if event == "opened" or self.open_incident is None:
            self.open_incident = {
                "id": f"INC-{home.ids.hex(32)}",
                "fingerprint": self.rng.choice(("outbox:dead_letter", "provider:error_rate", "disk:low")),
                "severity": self.rng.choice(("warning", "critical")),
                "status": "investigating",
                "source": "outbox",
                "title": "Delivery job dead-lettered",
                "detail": "telegram:483920117 failed 5 times",
                "first_seen": ts,
                "last_seen": ts,
                "occurrences": 1,
                "workspace": None,
                "evidence": [f"job:{home.ids.hex(6)}"],
                "resolution": None,
            }
            event = "opened"
        else:
            inc = self.open_incident
            inc["last_seen"] = ts
            inc["occurrences"] += 1
            if event == "resolved":
                inc["status"] = "resolved"
                inc["resolution"] = "cleared after retry"
        self.sinks.incidents.append({"ts": ts, "event": event, "incident": dict(self.open_incident)})
        if event == "resolved":
            requested = self.clock.ts()
            self.sinks.actions.append(
                {
                    "receipt_id": f"act_{home.ids.hex(16)}",
                    "service": "outbox",
                    "action": "retry_dead_letters",
                    "requested_at": requested,
                    "completed_at": self.clock.ts(),
                    "succeeded": True,
                    "persisted": True,
                    "verification": {
                        "status": "verified",
                        "before": "dead_letter=1",
                        "after": "dead_letter=0",
                        "detail": "1 job requeued",
                    },
                }
            )
            self.open_incident = None

    def _security_root(self) -> None:
        kind, label = self.rng.choice(
            (
                ("auth_failure", "login_failed"),
                ("rate_limit", "rate_limited"),
                ("config_change", "config_changed"),
                ("chat_pending", "chat_pending"),
            )
        )
        row: dict[str, Any] = {
            "ts": self.clock.ts(),
            "kind": kind,
            "label": label,
            "detail": f"surface=telegram chat={self.telegram_chat}",
        }
        if kind in ("auth_failure", "rate_limit"):
            row["ip"] = f"192.0.2.{self.rng.randrange(1, 250)}"
        self.sinks.security_root.append(row)

    def _commitment(self, sw: Any) -> None:
        home = self.home
        cid = home.ids()
        self.commitment = {"id": cid, "episodes": 0}
        lock = home.agent / "commitments.lock"
        if not lock.exists():
            write_file(lock, b"")
        spec = {
            "objective": home.pools.sentence(self.rng),
            "reading": {"act": "operate", "stakes": "reversible"},
            "criteria": [{"criterion_id": "c1", "statement": "report delivered"}],
            "min_satisfaction": "observed",
            "economics": {"lifetime_budget_usd": 5.0, "review_every_hours": 24, "stall_limit": 3},
            "cwd": sw.spec.cwd,
        }
        self.sinks.commitments.append(
            self._trace(
                {
                    "event_id": home.ids(),
                    "commitment_id": cid,
                    "ts": self.clock.ts(),
                    "kind": "opened",
                    "spec": spec,
                },
                sw,
            )
        )

    def _commitment_episode(self, sw: Any) -> None:
        home = self.home
        c = self.commitment
        c["episodes"] += 1
        ep = f"ep-{c['episodes']}"
        self.sinks.commitments.append(
            self._trace(
                {
                    "event_id": home.ids(),
                    "commitment_id": c["id"],
                    "ts": self.clock.ts(),
                    "kind": "episode-started",
                    "episode_id": ep,
                    "session_id": sw.spec.session_id,
                },
                sw,
            )
        )
        adv = {
            "kind": "advanced",
            "criteria_moved": ["c1"],
            "evidence": [{"kind": "ledger_entry", "session_id": sw.spec.session_id, "entry_id": home.ids()}],
        }
        self.sinks.commitments.append(
            self._trace(
                {
                    "event_id": home.ids(),
                    "commitment_id": c["id"],
                    "ts": self.clock.ts(),
                    "kind": "episode-ended",
                    "episode_id": ep,
                    "advancement": adv,
                    "spend_usd": 0.42,
                },
                sw,
            )
        )
        if c["episodes"] >= 2:
            self.sinks.commitments.append(
                self._trace(
                    {
                        "event_id": home.ids(),
                        "commitment_id": c["id"],
                        "ts": self.clock.ts(),
                        "kind": "closed",
                        "verdict": "fulfilled",
                        "strength": "observed",
                        "evidence": [],
                        "note": "done",
                    },
                    sw,
                )
            )
            self.commitment = None

    # -- documents and configuration ------------------------------------------------------------------

    def finish(self) -> None:
        from vakaudit.synth.static import write_static

        if self.commitment is not None:
            pass  # an open commitment stays open, as in a live home
        write_static(self.home, self)
