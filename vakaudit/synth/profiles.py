"""Shapes of synthetic homes: the knobs that make a home look like the measured one.

The ``measured`` profile is calibrated against the capacity report (vak 3.5.1, one real home:
60 sessions, 1,386 turns, 18,187 ledger entries, 92 MB of ledgers, 66 KB and 13 entries per turn,
48 KB capability bindings = 72% of ledger bytes, 134 MB of checkpoints across 17 sessions, store.db
about 12% of ledger bytes, a 256 MB home). ``tiny`` is the same model made small enough to commit,
with every artifact kind forced to appear at least once. No I/O here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from vakaudit.errors import UsageError

__all__ = ["Profile", "PROFILES", "get_profile", "APP_VERSIONS"]

MODELS = {
    # provider -> (model, USD per input token, USD per output token); None = no price known
    "anthropic": ("claude-sonnet-4-5", 3e-6, 15e-6),
    "openai": ("gpt-5-mini", 2.5e-7, 2e-6),
    "ollama": ("gemma4:e2b-mlx", None, None),
    "openrouter": ("qwen/qwen3-coder", None, None),  # not in the price table: cost rows without usd
}

LOCAL_PROVIDERS = frozenset({"ollama"})  # models run on the machine: no paid dispatch, no cost row

APP_VERSIONS = {
    # app_version written in the header -> ledger generation it was written by (ledger.md §0)
    "3.4.9": "g1",  # message-level projection, shape-A compaction, no cards, no prefix digests
    "3.5.0": "g2",  # turn-based, cards, prefix digests on receipts, shape-A compaction
    "3.5.1": "g3",  # the capacity report's build: range-keyed packets (shape-B compaction)
    "4.0.0": "g3",  # still one JSONL file; only in G2-layout (4.x) homes
}


@dataclass(frozen=True, slots=True)
class Profile:
    """Every parameter of the generator. Rates are per turn unless named otherwise."""

    name: str
    turns: int
    sessions: int
    # ledger generations: (app_version, share of sessions) per home layout
    versions_g1: tuple[tuple[str, float], ...] = (("3.4.9", 0.25), ("3.5.0", 0.25), ("3.5.1", 0.50))
    versions_g2: tuple[tuple[str, float], ...] = (
        ("3.4.9", 0.15),
        ("3.5.0", 0.20),
        ("3.5.1", 0.35),
        ("4.0.0", 0.30),
    )
    child_share: float = 0.05  # share of ledger files that are worker (child) sessions
    turns_sigma: float = 0.9  # spread of turns per session (lognormal)
    # per-turn shape
    tool_steps: tuple[float, ...] = (0.35, 0.355, 0.165, 0.08, 0.05)  # P(0..4 tool-calling steps)
    nudge_rate: float = 0.14
    epoch_change_rate: float = 0.10
    branch_rate: float = 0.015
    presentation_rate: float = 0.16  # in G2+ sessions
    approval_rate: float = 0.12
    # the report's ~2.3 provider attempts per turn equal its ~2.3 receipts per turn: a retried or
    # fallen-back dispatch (one more attempt, one more routing-evidence row) is rare
    retry_rate: float = 0.03
    fallback_rate: float = 0.015
    run_summary_rate: float = 0.60
    remember_rate: float = 0.02
    work_rate: float = 0.004
    goal_rate: float = 0.01
    compaction_every: int = 80  # a packet every N turns of one session
    # sizes (bytes)
    tool_result_mean: int = 7350  # mean size of file/output-like tool results (heavy-tailed)
    tool_result_sigma: float = 0.95
    tool_result_cap: int = 90_000
    final_answer_mean: int = 1500
    directive_mean: int = 260
    # sidecars and files
    checkpoint_session_share: float = 17 / 57
    checkpoint_files_per_turn: float = 41 / 1386
    checkpoint_file_mean_bytes: int = 3_270_000
    checkpoint_file_max_bytes: int = 19_800_000
    store_ratio: float = 0.124  # store.db / ledger bytes (11.4 MB / 92 MB): indexed while below it
    long_command_rate: float = 0.2  # bash runs that stream for minutes
    force_every_kind: bool = False  # tiny: make sure each rare artifact appears at least once
    minutes_between_sessions: float = 1000.0
    day_cap_usd: float = 4.0  # the FinOps day cap budget alerts are measured against


PROFILES = {
    "measured": Profile(name="measured", turns=1386, sessions=60),
    "tiny": Profile(
        name="tiny",
        turns=24,
        sessions=6,
        child_share=0.2,
        turns_sigma=0.3,
        branch_rate=0.06,
        epoch_change_rate=0.2,
        compaction_every=4,
        checkpoint_session_share=0.4,
        checkpoint_files_per_turn=0.2,
        checkpoint_file_mean_bytes=12_000,
        checkpoint_file_max_bytes=40_000,
        store_ratio=10.0,
        tool_result_mean=1100,
        tool_result_cap=6000,
        final_answer_mean=600,
        force_every_kind=True,
        work_rate=0.05,
        goal_rate=0.1,
        remember_rate=0.1,
        long_command_rate=0.0,
        day_cap_usd=0.02,
        approval_rate=0.6,
    ),
}


def get_profile(name: str, *, turns: int | None = None, sessions: int | None = None) -> Profile:
    """The named profile, rescaled to ``turns``/``sessions`` (sessions follow turns by default)."""
    try:
        base = PROFILES[name]
    except KeyError:
        raise UsageError(f"unknown profile {name!r}; choose one of: {', '.join(sorted(PROFILES))}") from None
    if turns is not None and turns < 1:
        raise UsageError("--turns must be at least 1")
    if sessions is not None and sessions < 1:
        raise UsageError("--sessions must be at least 1")
    new_turns = turns if turns is not None else base.turns
    if sessions is not None:
        new_sessions = sessions
    elif turns is not None:
        new_sessions = max(1, round(base.sessions * new_turns / base.turns))
    else:
        new_sessions = base.sessions
    return replace(base, turns=new_turns, sessions=new_sessions)
