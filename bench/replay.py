"""Benchmark: replay every execute step of a 1,000-turn session (request + checks per step).

Builds (once, cached in bench/_work/) a spec-following 1,000-turn session: per turn a
``turn_capabilities_bound`` (16 tools), an intent, the directive, three execute steps (receipt with
the prefix digest, assistant tool call, ~1.5 KB tool result; then the final answer) and a turn card;
receipts carry ``prefix_tokens`` where the spec says so (computed with
``vakaudit.replay.StepRequestBuilder``) and a ``prefix-changed`` activity where the tool list
changes (every 100 turns). The replay runs in a fresh child process so its peak RSS
(``ru_maxrss``) belongs to the replay alone.

    python bench/replay.py            # build if needed, measure, print and write results
    python bench/replay.py --runs 3

Results go to bench/results/replay.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE / "_work"
LEDGER = WORK / "replay_1000turns.jsonl"
RESULTS = HERE / "results" / "replay.md"
TURNS = 1000
STEPS_PER_TURN = 3
SEED = 20261130
WORDS = ("alpha beta gamma delta files folder parser build test deploy query cache index report "
         "network disk memory session ledger replay token budget plan card step").split()  # fmt: skip


def _tools(rng: random.Random, extra: int) -> list[dict]:
    tools = [
        {
            "name": "find_tools",
            "description": "Search tools not currently loaded.",
            "input_schema": {
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
                "type": "object",
            },
        }
    ]
    for t in range(15 + extra):
        props = {f"arg_{j}": {"description": "x" * 80, "type": "string"} for j in range(6)}
        tools.append(
            {
                "name": f"tool_{t}",
                "description": f"Tool number {t}. " + "Does a useful thing with the workspace. " * 6,
                "input_schema": {"properties": props, "required": ["arg_0"], "type": "object"},
            }
        )
    return tools


def build(path: Path) -> None:
    from vakaudit.ledger import SessionLog
    from vakaudit.replay import StepRequestBuilder, estimate_tokens, prefix_digest, request_message_chars

    rng = random.Random(SEED)
    clock_ns = [1_789_899_072 * 10**9]

    def clock() -> int:
        clock_ns[0] += rng.randint(10, 900) * 10**6
        return clock_ns[0]

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    if tmp.exists():
        tmp.unlink()
    header = {
        "session_id": "bench-replay",
        "created_at": "2026-09-20T10:00:00Z",
        "cwd": "/tmp/bench",
        "contract": {
            "app_version": "3.5.1",
            "provider": "anthropic",
            "model": "claude-x",
            "system_prompt": "S",
        },
    }
    log = SessionLog.create(tmp, header, clock=clock, fsync=False)
    builder = StepRequestBuilder(log)
    system = "You are vak, a general-purpose agent. " * 40
    last_digest, seen = "", set()
    for k in range(1, TURNS + 1):
        tools = _tools(rng, extra=k // 100)
        log.append(
            "turn_capabilities_bound",
            {
                "epoch": k,
                "capability_ids": sorted(f"Tool:{t['name']}" for t in tools[1:]),
                "excluded_ids": [],
                "system_prompt": system,
                "tool_schemas": tools,
                "core_tool_names": [t["name"] for t in tools[1:]],
                "deferred_tool_names": [],
                "tool_index": "",
                "tool_domains": {},
            },
        )
        words = rng.sample(WORDS, 6)
        log.append(
            "intent",
            {
                "reading": {"act": "act", "domains": words[:2]},
                "engagement": {"posture": "operational"},
                "provenance": {"tier": "signals"},
                "model_visible": f"Turn {k}: {' '.join(words)}.",
            },
        )
        log.append_message(
            {"role": "user", "content": [{"type": "text", "text": f"Please {' '.join(words)} now."}]}
        )
        digest = prefix_digest(system, tools)
        for step in range(1, STEPS_PER_TURN + 1):
            chars = request_message_chars(builder.request().messages)
            usage = {"input_tokens": 3000 + estimate_tokens(chars), "output_tokens": 50}
            receipt = {
                "purpose": "execute",
                "provider": "anthropic",
                "model": "claude-x",
                "winning_attempt": 0,
                "attempts": [
                    {
                        "ordinal": 0,
                        "reason": "initial",
                        "domain": "unknown",
                        "settlement": "ok",
                        "latency_ms": 900,
                        "usage": usage,
                    }
                ],  # fmt: skip
                "prefix_digest": digest,
            }
            if digest not in seen:
                receipt["prefix_tokens"] = 3000
            if last_digest and digest != last_digest:
                log.append(
                    "activity",
                    {
                        "activity_id": f"activity-{clock_ns[0]}",
                        "activity_kind": "diagnostic",
                        "status": "succeeded",
                        "label": "prefix-changed",
                        "data": {"current": digest, "previous": last_digest},
                    },
                )
            log.append("receipt", receipt)
            seen.add(digest)
            last_digest = digest
            meta = {"model": "claude-x", "stop_reason": "tool_use", "usage": usage}
            if step < STEPS_PER_TURN:
                call = f"call-{k}-{step}"
                log.append_message(
                    {
                        "role": "assistant",
                        "content": [
                            {
                                "type": "tool_use",
                                "id": call,
                                "name": "tool_1",
                                "input": {"arg_0": " ".join(words)},
                            }
                        ],
                    },  # fmt: skip
                    meta,
                )
                body = "\n".join(f"line {i}: {' '.join(rng.sample(WORDS, 8))}" for i in range(30))
                log.append_message(
                    {
                        "role": "user",
                        "content": [
                            {"type": "tool_result", "tool_use_id": call, "content": body, "is_error": False}
                        ],
                    }  # fmt: skip
                )
            else:
                meta["stop_reason"] = "end_turn"
                log.append_message(
                    {"role": "assistant", "content": [{"type": "text", "text": f"Done: {' '.join(words)}."}]},
                    meta,
                )
    log.close()
    tmp.rename(path)


CHILD = r"""
import json, resource, sys, time
from vakaudit.replay import iter_requests
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
c0 = time.process_time()
steps = fails = messages = 0
for s in iter_requests(sys.argv[1]):
    steps += 1
    messages += len(s.request.messages)
    fails += sum(1 for c in s.checks if c.status == "fail")
dt = time.perf_counter() - t0
cpu = time.process_time() - c0
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": dt, "cpu_seconds": cpu, "steps": steps, "fails": fails, "messages": messages,
                  "rss_mb": rss / 1024, "rss_before_mb": rss0 / 1024}))
"""


def measure(runs: int) -> list[dict]:
    out = []
    for _ in range(runs):
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, str(LEDGER)], capture_output=True, text=True, check=True
        )
        out.append(json.loads(proc.stdout))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--rebuild", action="store_true")
    args = ap.parse_args()
    if args.rebuild and LEDGER.exists():
        LEDGER.unlink()
    if not LEDGER.exists():
        t0 = time.perf_counter()
        build(LEDGER)
        print(f"built {LEDGER} in {time.perf_counter() - t0:.1f} s")
    size = LEDGER.stat().st_size
    entries = sum(1 for _ in LEDGER.open("rb"))
    results = measure(args.runs)
    secs = [r["seconds"] for r in results]
    cpus = [r["cpu_seconds"] for r in results]
    rss = [r["rss_mb"] for r in results]
    r0 = results[0]
    text = f"""# Replay benchmark (`bench/replay.py`)

Session: {TURNS} turns, {r0["steps"]} execute steps, {entries:,} entries, {size / 1e6:.1f} MB; a 16-tool binding
per turn, {STEPS_PER_TURN} steps per turn, ~1.5 KB tool results, prefix changes every 100 turns. Built once
with `SessionLog.append(fsync=False)`, seeded; receipts follow the spec (digest, `prefix_tokens`,
`prefix-changed` activities).

Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}. **The machine was
shared with other running jobs during this measurement**, so times are noisy; each figure is the median (min)
of {len(results)} runs, each in a fresh child process.

| what | wall time s, median (min) | CPU time s, median (min) | peak RSS MB, median | RSS before MB |
|---|---|---|---|---|
| `iter_requests` over every step (request + all checks) | {statistics.median(secs):.2f} ({min(secs):.2f}) | {statistics.median(cpus):.2f} ({min(cpus):.2f}) | {statistics.median(rss):.0f} | {r0["rss_before_mb"]:.0f} |

Requests rebuilt: {r0["steps"]} ({r0["messages"]:,} messages in all); failed checks: {r0["fails"]}.
Target: under 10 s. Time includes opening the ledger (`open_read_only`). Load average during the run:
{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (CPU time is the less noisy figure on a shared machine).

Shape of the work: no turn card or capacity profile is recorded, so every closed turn gets a
provisional card and, with the default 200,000-token horizon, fits at Full: each request carries every
earlier turn in full (3,000 messages at the end; {r0["messages"]:,} messages rebuilt in all). Per step the
replay re-plans (Regime A) and rebuilds the open turn; the closed-turn part of the projection, the
relevance index, the candidate list and each binding's digest are reused while they cannot change, so
the projection of the closed turns is recomputed once per turn, not once per step.
"""
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
