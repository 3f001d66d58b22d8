"""The ``entries`` columns read from a parsed ledger payload (role, control, directive, model,
usage, tool counts, activity, receipt and binding facts), one function for the compiled scanner's
reference: what a line gives when the kernel defers it. No I/O here.
"""

from __future__ import annotations

from typing import Any

import orjson

from vakaudit.ledger.vocab import DIRECTIVE_KIND, HEADER_KIND, RESULT_BLOCK, TEXT_BLOCK, directive_rule

__all__ = ["payload_facts"]


def _int(v: Any) -> int | None:
    if type(v) is int and -(1 << 63) <= v < (1 << 63):
        return v
    return None


def _str(v: Any) -> str | None:
    return v if type(v) is str else None


def _json_text(v: Any) -> str:
    return orjson.dumps(v).decode("utf-8")


def payload_facts(kind: str, payload: dict[str, Any]) -> tuple:
    """The ``entries`` columns read from a parsed payload, in table order: role, control, is_directive,
    model, provider, stop_reason, the four usage token counts, tool_use_count, tool_result_count,
    tool_result_bytes, activity_kind, activity_label, purpose, attempt_count, prefix_digest,
    prefix_tokens, epoch, app_version."""
    role = control = model = provider = stop_reason = None
    it = ot = crt = cct = None
    tu = trc = trb = None
    act_kind = act_label = purpose = prefix_digest = app_version = None
    attempts = prefix_tokens = epoch = None
    directive = None
    if kind == DIRECTIVE_KIND:
        msg = payload.get("message")
        meta = payload.get("meta")
        if type(meta) is not dict:
            meta = {}
        # a control message is one whose meta.control is present and not null, whatever its JSON type
        # (ledger.vocab.is_directive); the column keeps a string as it is, any other value as JSON
        raw_control = meta.get("control")
        control = raw_control if type(raw_control) is str or raw_control is None else _json_text(raw_control)
        model = _str(meta.get("model"))
        stop_reason = _str(meta.get("stop_reason"))
        usage = meta.get("usage")
        if type(usage) is dict:
            it = _int(usage.get("input_tokens"))
            ot = _int(usage.get("output_tokens"))
            crt = _int(usage.get("cache_read_input_tokens"))
            cct = _int(usage.get("cache_creation_input_tokens"))
        tu = trc = trb = 0
        has_text = False
        if type(msg) is dict:
            role = _str(msg.get("role"))
            content = msg.get("content")
            if type(content) is list:
                for block in content:
                    if type(block) is not dict:
                        continue
                    t = block.get("type")
                    if t == "tool_use":
                        tu += 1
                    elif t == RESULT_BLOCK:
                        trc += 1
                        c = block.get("content")
                        if type(c) is str:
                            trb += len(c) if c.isascii() else len(c.encode("utf-8", "surrogatepass"))
                        elif c is not None:
                            trb += len(orjson.dumps(c))
                    elif t == TEXT_BLOCK:
                        has_text = True
        directive = directive_rule(role, control is not None, has_text, trc != 0)
    elif kind == "receipt":
        purpose = _str(payload.get("purpose"))
        provider = _str(payload.get("provider"))
        model = _str(payload.get("model"))
        pd = payload.get("prefix_digest")
        prefix_digest = pd if type(pd) is str and pd else None
        prefix_tokens = _int(payload.get("prefix_tokens"))
        a = payload.get("attempts")
        attempts = len(a) if type(a) is list else None
    elif kind == "activity":
        act_kind = _str(payload.get("activity_kind"))
        act_label = _str(payload.get("label"))
    elif kind == "turn_capabilities_bound" or kind == "turn_capabilities_ref":
        epoch = _int(payload.get("epoch"))
    elif kind == HEADER_KIND:
        contract = payload.get("contract")
        if type(contract) is dict:
            app_version = _str(contract.get("app_version"))
            provider = _str(contract.get("provider"))
            model = _str(contract.get("model"))
    return (
        role, control, directive, model, provider, stop_reason, it, ot, crt, cct, tu, trc, trb,
        act_kind, act_label, purpose, attempts, prefix_digest, prefix_tokens, epoch, app_version,
    )  # fmt: skip
