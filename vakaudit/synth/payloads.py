"""Payloads of the ledger entries a synthetic turn writes around its steps.

The text of a directive and of a final answer, the ``intent`` payload and its model-visible
reading, the ``presentation`` + ``turn_card`` pair, the summarize receipt + ``compaction`` and the
``work`` contract entries. :class:`_TurnPayloads` is a part of the session writer
(:class:`vakaudit.synth.session._SessionWriter` derives from it): its methods draw from the
writer's RNG, content pools and ids and append through the writer's ``append``/``activity``; the
part adds no attributes of its own.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from vakaudit.ledger.digest import canonical, payload_digest
from vakaudit.replay.prefix import estimate_tokens

if TYPE_CHECKING:
    from vakaudit.synth.turnstate import ChainState, TurnState

_ACTS_EFFECT = ("modify", "operate", "author")
_ACTS_OTHER = ("answer", "locate", "analyze", "converse", "verify", "orchestrate")
_STANCES = ("operational", "exploratory", "careful", "evidential", "conversational")


class _TurnPayloads:
    """The session writer's builders of the entries a turn writes around its steps."""

    def _directive_text(self, act: str) -> str:
        rng = self.rng
        size = self._lognormal(self.profile.directive_mean * 0.6, 0.8, 4000)
        lead = {
            "modify": "Please fix",
            "operate": "Run",
            "author": "Draft",
            "answer": "What is",
            "locate": "Where is",
            "analyze": "Compare",
            "converse": "Thanks,",
            "verify": "Check whether",
            "orchestrate": "Plan and delegate",
        }[act]
        return f"{lead} {self.pools.prose(rng, max(10, size))}"

    def _model_visible(self, act: str, stakes: str) -> str | None:
        if self.rng.random() < 0.08:
            return None
        return (
            f"Reading: {act} ({stakes}). "
            + self.pools.sentence(self.rng)
            + " "
            + self.pools.sentence(self.rng)
        )

    def _intent_payload(self, act: str, stakes: str, tier: str, domains: list, visible: str | None) -> dict:
        rng = self.rng
        conf = round(rng.uniform(0.55, 0.98), 2)
        reading = {
            "act": act,
            "horizon": rng.choice(("turn", "session", "standing")),
            "stakes": stakes,
            "evidence": rng.choice(("none", "workspace", "web", "memory")),
            "clarity": rng.choice(("clear", "clear", "ambiguous")),
            "attendance": rng.choice(("attended", "unattended")),
            "alternate_acts": [rng.choice(_ACTS_OTHER)],
            "confidence": conf,
            "axis_confidence": {
                "act": conf,
                "stakes": round(rng.uniform(0.5, 0.99), 2),
                "domains": round(rng.uniform(0.4, 0.99), 2),
            },
            "domains": domains,
            "input_modalities": ["text"],
            "output_modalities": ["text"] if rng.random() < 0.8 else ["text", "card"],
        }
        payload: dict[str, Any] = {"reading": reading}
        if self.gen == "g3":
            payload["strands"] = []
        stance = rng.choice(_STANCES)
        payload["engagement"] = {
            "posture": rng.choice(("general", "focused", "delegating")),
            "stance": stance,
            "slice": {"keep_domains": domains, "defer_rest": True},
            "checkpoint": act in _ACTS_EFFECT,
            "notes": [self.pools.sentence(rng) for _ in range(rng.randint(2, 5))],
            "guidelines": [self.pools.sentence(rng) for _ in range(rng.randint(1, 3))],
        }
        provenance: dict[str, Any] = {
            "tier": tier,
            "resolver_version": 3,
            "signals": [
                {
                    "name": rng.choice(("verb", "path", "url", "question_mark", "imperative")),
                    "weight": round(rng.random(), 2),
                }
                for _ in range(rng.randint(1, 4))
            ],
        }
        if tier in ("local-model", "cloud-model"):
            provenance["model"] = "gemma4:e2b-mlx" if tier == "local-model" else "claude-haiku-4-5"
            provenance["prompt_digest"] = self.ids.hex(64)
        provenance["reproducible"] = tier in ("declared", "signals")
        payload["provenance"] = provenance
        if rng.random() < 0.1:
            payload["outcome"] = {"kind": rng.choice(("held", "restated")), "note": self.pools.sentence(rng)}
        if visible is not None:
            payload["model_visible"] = visible
        return payload

    def _final_text(self, turn: TurnState, present: bool) -> str:
        size = self._lognormal(self.profile.final_answer_mean * 0.75, 0.7, 20_000)
        return self.pools.prose(self.rng, size)

    def _present(self, turn: TurnState, final_id: str) -> None:
        rng = self.rng
        sem = rng.choice(("metric", "table", "list", "comparison"))
        title = self.pools.sentence(rng)[:60]
        payload = {
            "items": [
                {"label": self.pools.words(rng, 2), "value": rng.randint(1, 999)}
                for _ in range(rng.randint(2, 8))
            ],
            "note": self.pools.sentence(rng),
            "title": title,
        }
        payload = canonical(payload)
        digest = payload_digest(payload)
        derived = [c[1] for c in turn.calls[:2]]
        if turn.calls and rng.random() < 0.5:
            source = {"kind": "tool_call", "tool_use_id": turn.calls[-1][1]}
        else:
            source = {"kind": "fence", "message_entry_id": final_id}
        pres = self.append(
            "presentation",
            {
                "turn_id": turn.directive_id,
                "source": source,
                "semantic_type": sem,
                "skill_id": "core",
                "skill_version": "1.0.0",
                "schema_version": 1,
                "payload": payload,
                "payload_digest": digest,
                "derived_from": derived,
                "title": title,
                "identity_digest": hashlib.sha256(f"{sem}\x00{title}".encode()).hexdigest(),
            },
        )
        self.activity(
            "presentation_selection",
            "succeeded",
            "Presentation selected",
            turn=turn.number,
            data={
                "fallback_used": "false",
                "mode": "card",
                "revision": 1,
                "semantic_type": sem,
                "spec_id": f"core/{sem}",
            },
        )
        did = [
            {"tool": c[0], "args_digest": c[2], "evidence_id": c[1], "shape": f"{c[3]} chars"}
            for c in turn.calls
        ]
        narration = turn.final_text.split(". ")[0][:300]
        full_chars = (
            len(turn.directive_text.encode()) + len(turn.final_text.encode()) + sum(c[3] for c in turn.calls)
        )
        card = {
            "turn_id": turn.directive_id,
            "asked": turn.directive_text[:400],
            "did": did,
            "answered": {
                "presentations": [
                    {
                        "id": pres.id,
                        "semantic_type": sem,
                        "title": title,
                        "digest": digest,
                        "derived_from": derived,
                    }
                ],
                "narration": narration,
            },
            "outcome": "completed",
            "reading": {"act": turn.act, "domains": turn.domains, "modalities": ["text"]},
            "tokens_full": estimate_tokens(full_chars),
            "tokens_card": estimate_tokens(len(narration) + 120),
        }
        self.append("turn_card", {"turn_id": turn.directive_id, "card": card})
        turn.presentations.append(pres.id)

    def _compaction(self, chain: ChainState) -> None:
        rng = self.rng
        ids = chain.directive_ids
        receipt: dict[str, Any] = {
            "purpose": "summarize",
            "provider": self.provider,
            "model": self.model,
            "winning_attempt": 0,
            "attempts": [
                {
                    "ordinal": 0,
                    "reason": "initial",
                    "domain": "unknown",
                    "settlement": "ok",
                    "latency_ms": int(rng.uniform(800, 5000)),
                    "usage": {
                        "input_tokens": rng.randint(4000, 20000),
                        "output_tokens": rng.randint(200, 1024),
                    },
                }
            ],
        }
        if self.gen != "g1":
            receipt["prefix_digest"] = ""
        self.append("receipt", receipt)
        summary = self.pools.prose(rng, 900)
        tokens_before = rng.randint(40_000, 180_000)
        if self.gen == "g3":
            last = len(ids) - 2 if len(ids) >= 3 else len(ids) - 1
            self.append(
                "compaction",
                {
                    "summary": summary,
                    "first_turn_id": ids[0],
                    "last_turn_id": ids[max(0, last)],
                    "model": self.model,
                    "tokens_before": tokens_before,
                    "reset_all": False,
                },
            )
        else:
            kept = ids[-1]
            payload: dict[str, Any] = {
                "summary": summary,
                "first_kept_entry_id": kept,
                "tokens_before": tokens_before,
            }
            if rng.random() < 0.5:
                payload["partition"] = {
                    "selected_entry_ids": [kept],
                    "dropped_entry_ids": list(ids[:-1][-20:]),
                }
            payload["reset_all"] = False
            self.append("compaction", payload)
        self.home.compactions[self.gen == "g3"] += 1

    def _work_entries(self, turn: TurnState) -> None:
        cid = f"work-{self.ids.hex(8)}"
        items = [
            {
                "item_id": f"item-{i}",
                "title": self.pools.words(self.rng, 4),
                "instructions": self.pools.sentence(self.rng),
                "dependencies": [] if i == 0 else [f"item-{i - 1}"],
                "owner": "parent_agent" if i == 0 else "worker",
                "required": True,
                "readonly": False,
                "path_claims": [],
                "criterion_ids": ["c1"],
            }
            for i in range(2)
        ]
        contract = {
            "contract_id": cid,
            "revision": 0,
            "source_entry_id": turn.directive_id,
            "objective": turn.directive_text[:160],
            "constraints": [],
            "assumptions": [],
            "criteria": [
                {
                    "criterion_id": "c1",
                    "statement": "tests pass",
                    "kind": {"kind": "shell", "command": "cargo test"},
                    "required": True,
                }
            ],
            "items": items,
        }
        self.append(
            "work",
            {"contract_id": cid, "revision": 0, "kind": {"kind": "contract_created", "contract": contract}},
        )
        self.append(
            "work",
            {
                "contract_id": cid,
                "revision": 0,
                "kind": {
                    "kind": "contract_status_changed",
                    "from": "draft",
                    "to": "active",
                    "reason": "accepted",
                },
            },
        )
        self.append(
            "work",
            {
                "contract_id": cid,
                "revision": 0,
                "kind": {
                    "kind": "item_status_changed",
                    "item_id": "item-0",
                    "from": "proposed",
                    "to": "ready",
                    "attempt": 0,
                    "reason": "dependencies satisfied",
                },
            },
        )


