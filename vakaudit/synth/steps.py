"""The ledger entries of one step of a synthetic turn, in vak's write order.

A step is one dispatch: its [retry / route-fallback activities], [``prefix-changed`` diagnostic]
and execute ``receipt`` (written before the response), then the assistant ``message``, and for a
tool call the [approval activity], the tool's run or worker activity and the tool-result
``message``; a worker session's receipts are written here too. :class:`_StepWriter` is a part of
the session writer (:class:`vakaudit.synth.session._SessionWriter` derives from it): it draws from
the writer's RNG, content pools and ids, appends through the writer's log, and emits the step's
events (approval, remembered note, tool run) to the home.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vakaudit.ledger.jsonenc import dumps
from vakaudit.replay.prefix import estimate_tokens
from vakaudit.synth.content import TOOL_KINDS
from vakaudit.synth.events import ApprovalAsked, Remembered, ToolRan
from vakaudit.synth.profiles import MODELS

if TYPE_CHECKING:
    from vakaudit.synth.turnstate import TurnState


class _StepWriter:
    """The session writer's per-step methods: dispatch and receipt, assistant message, tool call."""

    def _dispatch(self, turn: TurnState, state: dict, tail_text: str, step: int) -> None:
        """Activities of one dispatch and its execute receipt (written before the response)."""
        rng = self.rng
        prof = self.profile
        home = self.home
        attempts = []
        provider, model = self.provider, self.model
        latency = int(self._lognormal(2400, 0.6, 60_000))
        ordinal = 0
        if rng.random() < prof.retry_rate:
            attempts.append(
                {
                    "ordinal": 0,
                    "reason": "initial",
                    "domain": "network",
                    "settlement": "unknown",
                    "latency_ms": int(rng.uniform(5000, 30_000)),
                    "error": "stream reset",
                }
            )
            ordinal = 1
            self.activity(
                "retry",
                "succeeded",
                "Retry attempt 1",
                turn=turn.number,
                detail="provider timeout",
                data={"attempt": 1, "delay_ms": 500},
            )
        if rng.random() < prof.fallback_rate:
            attempts.append(
                {
                    "ordinal": ordinal,
                    "reason": "initial" if ordinal == 0 else "retry",
                    "domain": "provider",
                    "settlement": "failed",
                    "latency_ms": int(rng.uniform(200, 4000)),
                    "error": "503 overloaded",
                }
            )
            ordinal += 1
            provider, model = "openai", MODELS["openai"][0]
            self.activity(
                "route_fallback",
                "succeeded",
                "Route fallback",
                turn=turn.number,
                detail=f"{provider}/{model}",
                data={"model": model, "provider": provider},
            )
        home.clock.advance_ms(latency)
        surface = self.surface
        digest = surface.digest if self.gen != "g1" else None
        prefix_tokens = None
        # usage: the prefix plus the messages, in tokens
        prefix_est = estimate_tokens(surface.prefix_chars)
        msg_tokens = estimate_tokens(state["msg_chars"] + len(tail_text.encode()))
        if digest is not None and digest not in state["seen"]:
            # the first receipt of a digest measures prefix_tokens = U - estimate(message chars),
            # with the message chars of the request as a replay rebuilds it (replay.md §11)
            prefix_tokens = max(0, prefix_est + rng.randint(-40, 40))
            input_tokens = prefix_tokens + estimate_tokens(home.request_message_chars(self))
        else:
            input_tokens = prefix_est + msg_tokens + rng.randint(0, 60)
        usage: dict[str, Any] = {
            "input_tokens": input_tokens,
            "output_tokens": self._lognormal(300, 0.8, 8000),
        }
        if provider == "anthropic" and self.gen != "g1" and rng.random() < 0.7:
            usage["cache_read_input_tokens"] = int(prefix_est * rng.uniform(0.6, 1.0))
        if self.gen == "g3" and provider == "ollama":
            usage["prefill_ms"] = int(rng.uniform(200, 3000))
        attempts.append(
            {
                "ordinal": ordinal,
                "reason": "initial" if ordinal == 0 else "retry",
                "domain": "unknown",
                "settlement": "ok",
                "latency_ms": latency,
                "usage": usage,
            }
        )
        if provider != self.provider:
            attempts[-1]["provider"] = provider
            attempts[-1]["model"] = model
        if digest is not None and state["last_digest"] and digest != state["last_digest"]:
            self.log.append_activity(
                f"activity-{self.clock.ns}",
                "diagnostic",
                "succeeded",
                "prefix-changed",
                data={"current": digest, "previous": state["last_digest"]},
            )
            self.entries += 1
        receipt: dict[str, Any] = {
            "purpose": "execute",
            "provider": provider,
            "model": model,
            "winning_attempt": ordinal,
            "attempts": attempts,
        }
        if digest is not None:
            receipt["prefix_digest"] = digest
            if prefix_tokens is not None:
                receipt["prefix_tokens"] = prefix_tokens
            state["seen"].add(digest)
            state["last_digest"] = digest
        self.append("receipt", receipt)
        turn.receipts.append((provider, model, usage, attempts))
        state["usage"] = usage
        state["model"] = model

    def _assistant_meta(self, turn: TurnState) -> dict:
        provider, model, usage, _ = turn.receipts[-1]
        return {"model": model, "stop_reason": "end_turn", "usage": usage}

    def _assistant_blocks(self, text: str) -> list:
        blocks: list[dict] = []
        if self.gen == "g3" and self.rng.random() < 0.15:
            blocks.append(
                {"type": "thinking", "text": self.pools.prose(self.rng, 300), "signature": self.ids.hex(48)}
            )
        blocks.append({"type": "text", "text": text})
        return blocks

    def _choose_tool(self, force_task: bool) -> str:
        if force_task:
            return "task"
        rng = self.rng
        names = (
            "read",
            "bash",
            "grep",
            "web_search",
            "web_fetch",
            "edit",
            "write",
            "glob",
            "recall",
            "sql_query",
            "python",
            "calendar_list",
            "weather",
            "mail_search",
            "remember",
        )
        weights = (25, 22, 10, 10, 6, 6, 4, 4, 3, 3, 3, 1, 1, 1, 0)
        if rng.random() < self.profile.remember_rate:
            return "remember"
        return rng.choices(names, weights=weights)[0]

    def _tool_input(self, tool: str) -> dict:
        rng = self.rng
        path = f"{rng.choice(('src', 'crates/vak-core/src', 'tests', 'docs'))}/{self.pools.words(rng, 1)}.rs"
        if tool in ("bash", "python"):
            cmd = rng.choice(
                (
                    "cargo test -p vak-session",
                    "ls -la",
                    "git status --short",
                    "pytest -q tests/",
                    "rg -n 'prefix_digest' crates",
                    "du -sh ~/.local/share/vak",
                    "make build",
                )
            )
            return {"command": cmd, "timeout": rng.choice((30, 120, 600))}
        if tool in ("read", "edit", "write"):
            out: dict[str, Any] = {"path": path}
            if tool == "edit":
                out = {
                    "new_text": self.pools.sentence(rng),
                    "old_text": self.pools.sentence(rng),
                    "path": path,
                }
            if tool == "write":
                out = {"content": self.pools.prose(rng, 200), "path": path}
            return out
        if tool in ("grep", "glob"):
            return {"path": ".", "pattern": self.pools.words(rng, 1)}
        if tool == "task":
            return {"instructions": self.pools.prose(rng, 240), "title": self.pools.words(rng, 4)}
        if tool == "remember":
            return {
                "kind": rng.choice(("fact", "decision", "preference")),
                "tag": self.pools.words(rng, 1),
                "text": self.pools.sentence(rng),
            }
        return {"query": self.pools.words(rng, rng.randint(2, 6))}

    def _tool_result(self, tool: str, inp: dict) -> tuple[str, bool]:
        rng = self.rng
        kind = TOOL_KINDS.get(tool, ("text", []))[0]
        if rng.random() < 0.04:
            return f"error: {self.pools.sentence(rng)}", True
        if kind in ("ack", "card"):
            return f"ok: wrote {rng.randint(10, 9000)} bytes to {inp.get('path', 'memory')}", False
        size = self.home.result_size(rng)
        if kind == "bash":
            body = self.pools.slice(rng, size)
            content = f"{body}\nexit code: {0 if rng.random() < 0.9 else 1}"
        elif kind in ("links", "table", "json"):
            items = []
            used = 0
            while used < size:
                item = {
                    "title": self.pools.sentence(rng)[:80],
                    "url": f"https://example.org/{self.ids.hex(10)}",
                    "snippet": self.pools.prose(rng, 220),
                }
                items.append(item)
                used += 370
            content = dumps(items).decode()
        else:
            content = self.pools.slice(rng, size)
        self.home.result_written(len(dumps(content)))
        return content, False

    def _tool_step(self, turn: TurnState, state: dict, tool: str) -> None:
        rng = self.rng
        home = self.home
        self.tool_seq += 1
        tool_use_id = f"call_{self.ids()}" if self.gen == "g3" else f"toolu_{self.ids.hex(24)}"
        inp = self._tool_input(tool)
        lead = self.pools.sentence(rng) if rng.random() < 0.6 else ""
        blocks: list[dict] = []
        if self.gen == "g3" and rng.random() < 0.1:
            blocks.append({"type": "thinking", "text": self.pools.prose(rng, 200)})
        if lead:
            blocks.append({"type": "text", "text": lead})
        blocks.append({"type": "tool_use", "id": tool_use_id, "name": tool, "input": inp})
        meta = self._assistant_meta(turn)
        meta["stop_reason"] = "tool_use"
        self.log.append_message({"role": "assistant", "content": blocks}, meta)
        self.entries += 1
        started = self.clock.ns
        if tool in ("bash", "python", "write", "edit") and rng.random() < self.profile.approval_rate:
            denied = rng.random() < 0.1
            self.activity(
                "approval",
                "denied" if denied else "succeeded",
                f"Approve {tool}",
                turn=turn.number,
                detail=inp.get("command") or inp.get("path"),
                data={"tool": tool, "tool_use_id": tool_use_id},
            )
            home.emit(ApprovalAsked(self, tool, denied))
        if tool == "task":
            content = home.spawn_child(self, inp["instructions"])
            is_error = False
            self.activity(
                "worker",
                "succeeded",
                "Worker finished",
                turn=turn.number,
                data={"tool": tool, "tool_use_id": tool_use_id},
            )
        else:
            content, is_error = self._tool_result(tool, inp)
            duration = self._lognormal(400, 1.0, 30_000)
            if tool in ("bash", "python"):
                duration = home.sandbox_execution(self, inp["command"], content, is_error)
            self.clock.advance_ms(duration)
            status = "failed" if is_error else "succeeded"
            self.activity(
                "run",
                status,
                tool,
                turn=turn.number,
                detail=None,
                data={"tool": tool, "tool_use_id": tool_use_id},
            )
            if tool == "remember" and not is_error:
                home.emit(Remembered(self, inp))
        self.log.append_message(
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": tool_use_id,
                        "content": content,
                        "is_error": is_error,
                    }
                ],
            }
        )
        self.entries += 1
        home.emit(ToolRan(self, tool, tool_use_id, not is_error, (self.clock.ns - started) // 1_000_000))
        state["msg_chars"] += len(dumps(inp)) + min(len(content.encode()), 600)
        turn.calls.append((tool, tool_use_id, inp, len(content), content[:200]))

    def _child_receipt(self, turn: TurnState) -> None:
        # Worker ledgers carry no capability binding (unconfirmed in vak): their receipts say ""
        # for the prefix digest, so a replay has nothing to check them against.
        latency = self._lognormal(1800, 0.5, 30_000)
        self.clock.advance_ms(latency)
        usage = {
            "input_tokens": self.rng.randint(3000, 14000),
            "output_tokens": self._lognormal(200, 0.7, 4000),
        }
        attempts = [
            {
                "ordinal": 0,
                "reason": "initial",
                "domain": "unknown",
                "settlement": "ok",
                "latency_ms": latency,
                "usage": usage,
            }
        ]
        receipt = {
            "purpose": "execute",
            "provider": self.provider,
            "model": self.model,
            "winning_attempt": 0,
            "attempts": attempts,
        }
        if self.gen != "g1":
            receipt["prefix_digest"] = ""
        self.append("receipt", receipt)
        turn.receipts.append((self.provider, self.model, usage, attempts))
