"""Provider wire bodies for a neutral request (§14): Anthropic Messages and OpenAI chat completions.

Pure functions from `NeutralRequest` to JSON-ready dicts; no I/O here.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from vakaudit.replay.prefix import compact_json
from vakaudit.replay.request import NeutralRequest, cache_boundary

__all__ = ["PROVIDERS", "anthropic_body", "openai_body", "serialize"]

PROVIDERS = ("anthropic", "openai")
ANTHROPIC_TOOL_SEARCH = {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}
"""First tool entry when any tool is deferred (type string unconfirmed for 3.5.x, §14)."""
_EPHEMERAL = {"type": "ephemeral"}
_MAX_HINTED = 3


def _anthropic_block(block: Mapping[str, Any]) -> dict:
    if block.get("type") == "provider":
        raw = block.get("raw")
        return copy.deepcopy(dict(raw)) if isinstance(raw, Mapping) else {"type": "provider", "raw": raw}
    return copy.deepcopy(dict(block))


def anthropic_body(request: NeutralRequest) -> dict[str, Any]:
    """`build_body` of the Anthropic adapter (§14)."""
    b = cache_boundary(request.messages)
    messages: list[dict] = []
    for i, message in enumerate(request.messages):
        blocks = []
        for block in message.get("content") or []:
            if not isinstance(block, Mapping):
                continue
            if block.get("type") == "thinking" and i < b:
                continue
            blocks.append(_anthropic_block(block))
        messages.append({"role": message.get("role"), "content": blocks})
    hinted = [p for p in request.breakpoints if p is not None and 0 <= p < len(messages)]
    for p in hinted[-_MAX_HINTED:]:
        if messages[p]["content"]:
            messages[p]["content"][-1]["cache_control"] = dict(_EPHEMERAL)
    body: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": messages,
        "stream": True,
        "system": [{"type": "text", "text": request.system, "cache_control": dict(_EPHEMERAL)}],
    }
    if request.tools:
        tools: list[dict] = []
        if any(t.get("defer") for t in request.tools):
            tools.append(dict(ANTHROPIC_TOOL_SEARCH))
        for t in request.tools:
            item = {"name": t["name"], "description": t["description"], "input_schema": t["input_schema"]}
            if t.get("defer"):
                item["defer_loading"] = True
            tools.append(item)
        body["tools"] = tools
    return body


def _openai_messages(request: NeutralRequest) -> list[dict]:
    out: list[dict] = [{"role": "system", "content": request.system}]
    for message in request.messages:
        content = [b for b in message.get("content") or [] if isinstance(b, Mapping)]
        if message.get("role") == "assistant":
            texts = [b.get("text", "") for b in content if b.get("type") == "text"]
            calls = [
                {
                    "id": b.get("id"),
                    "type": "function",
                    "function": {
                        "name": b.get("name"),
                        "arguments": compact_json(b.get("input")).decode("utf-8"),
                    },
                }
                for b in content
                if b.get("type") == "tool_use"
            ]
            item: dict[str, Any] = {"role": "assistant", "content": "\n".join(texts) if texts else None}
            if calls:
                item["tool_calls"] = calls
            elif item["content"] is None:
                item["content"] = ""
            out.append(item)
            continue
        for b in content:
            if b.get("type") == "tool_result":
                out.append(
                    {"role": "tool", "tool_call_id": b.get("tool_use_id"), "content": b.get("content")}
                )
        texts = [b for b in content if b.get("type") in ("text", "image")]
        if not texts:
            continue
        if any(b.get("type") == "image" for b in texts):
            parts = []
            for b in texts:
                if b.get("type") == "text":
                    parts.append({"type": "text", "text": b.get("text", "")})
                else:
                    src = b.get("source") or {}
                    url = f"data:{src.get('media_type', '')};base64,{src.get('data', '')}"
                    parts.append({"type": "image_url", "image_url": {"url": url}})
            out.append({"role": "user", "content": parts})
        else:
            out.append({"role": "user", "content": "\n".join(b.get("text", "") for b in texts)})
    return out


def openai_body(request: NeutralRequest, *, openrouter: bool = False) -> dict[str, Any]:
    """OpenAI chat-completions body (§14). The output cap on this wire is unconfirmed: not sent."""
    body: dict[str, Any] = {
        "model": request.model,
        "messages": _openai_messages(request),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    tools = [t for t in request.tools if not t.get("defer")]
    if tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t["name"],
                    "description": t["description"],
                    "parameters": t["input_schema"],
                },
            }
            for t in tools
        ]
    if request.session_key:
        body["prompt_cache_key"] = request.session_key
        if openrouter:
            body["session_id"] = request.session_key
    return body


def serialize(request: NeutralRequest, provider: str) -> dict[str, Any]:
    """Wire body for `provider` (`anthropic` or `openai`)."""
    if provider == "anthropic":
        return anthropic_body(request)
    if provider == "openai":
        return openai_body(request)
    raise ValueError(f"unknown provider {provider!r}; expected one of {', '.join(PROVIDERS)}")
