"""Build a whole synthetic vak home: plan the sessions, write them in time order, then the rest.

Memory does not grow with the home: sessions are planned as small integer tables and written one
after another (a worker session is written while its parent's handle is open); every side ledger is
a streaming append; large bodies are shared from :mod:`vakaudit.synth.content` (capability bindings
stay shared even in the open ledger's memory, workspaces are corpus ranges). What remains is the open
session's own state (its entries and the request builder's conversation), so the peak follows the
longest session, at about 0.8 times its ledger bytes.
"""

from __future__ import annotations

import ctypes
import math
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import vakaudit.synth.sidecars as sidecars
from vakaudit.errors import UsageError
from vakaudit.ledger.ids import format_ts
from vakaudit.ledger.keys import workspace_key
from vakaudit.replay import StepRequestBuilder
from vakaudit.synth.checkpoints import Workspace, store_checkpoint
from vakaudit.synth.clock import DEFAULT_START_NS, IdSource, SynthClock
from vakaudit.synth.content import WORKSPACES, ContentPools
from vakaudit.synth.events import (
    ApprovalAsked,
    CheckpointTaken,
    Event,
    HomeFacts,
    IntentRead,
    Remembered,
    SessionEnded,
    SideSinks,
    Subscribers,
    ToolRan,
    TurnEnded,
    TurnSettled,
)
from vakaudit.synth.profiles import APP_VERSIONS, Profile, get_profile
from vakaudit.synth.session import SessionSpec, write_session
from vakaudit.synth.sinks import JsonlSink
from vakaudit.synth.store import StoreWriter

#: ``--layout`` values: the JSONL-era G1 and G2 layouts, and vak's 7.0 data baseline
LAYOUTS = ("g1", "g2", "v7")

__all__ = ["LAYOUTS", "build_home", "build_one_session", "SynthResult", "HomeWriter", "plan_sessions"]

ProgressFn = Callable[[str, int, int], None]


@dataclass(slots=True)
class SynthResult:
    """What was written (generator-side counts; tests read the files back instead)."""

    out: Path
    profile: str
    layout: str
    seed: int
    sessions: int = 0
    turns: int = 0
    ledger_entries: int = 0
    app_versions: dict = field(default_factory=dict)
    compactions_shape_a: int = 0
    compactions_shape_b: int = 0
    checkpoints: int = 0
    store_rows: int = 0
    cost_log_compactions: int = 0
    record: dict | None = None  # layout v7: what the 7.0 writers wrote (vakaudit.synth.v7.SynthRecord)
    keys: Any = None  # layout v7: the tenant keys (vakaudit.synth.v7.V7Keys); never inside the home


@dataclass(slots=True)
class _ParentPlan:
    turns: int
    version: str
    cwd: str
    surface: str
    provider: str
    checkpoint_turns: frozenset = frozenset()
    workspace_bytes: int = 0
    child_turns: frozenset = frozenset()
    forced: frozenset = frozenset()
    scheduled: bool = False


def _heap_trimmer() -> Callable[[], object] | None:
    """glibc's ``malloc_trim(0)``, or None where the C library has none (macOS, musl, Windows)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return lambda: trim(0)


def _split(total: int, weights: list[float]) -> list[int]:
    """Largest-remainder split of ``total`` into len(weights) integers >= 1 (when total allows)."""
    n = len(weights)
    base = [1] * n if total >= n else [0] * n
    rest = total - sum(base)
    s = sum(weights) or 1.0
    raw = [rest * w / s for w in weights]
    ints = [math.floor(x) for x in raw]
    left = rest - sum(ints)
    order = sorted(range(n), key=lambda i: (-(raw[i] - ints[i]), i))
    for i in order[:left]:
        ints[i] += 1
    return [b + i for b, i in zip(base, ints, strict=True)]


def plan_sessions(profile: Profile, layout: str, seed: int) -> tuple[list[_ParentPlan], int]:
    """Per parent session: turns, version, workspace, checkpoint turns; plus the worker count."""
    rng = random.Random(f"plan:{seed}")
    m = profile.sessions
    children = round(m * profile.child_share) if m >= 2 else 0
    if profile.force_every_kind and m >= 2:
        children = max(1, children)
    parents = max(1, m - children)
    parents = min(parents, profile.turns)
    children = m - parents if m > parents else 0
    weights = [math.exp(rng.gauss(0, profile.turns_sigma)) for _ in range(parents)]
    turns = _split(profile.turns, weights)
    versions = profile.versions_g1 if layout == "g1" else profile.versions_g2
    counts = _split(parents, [w for _, w in versions]) if parents >= len(versions) else [0] * len(versions)
    if parents < len(versions):
        counts[-1] = parents
    version_of: list[str] = []
    for (version, _), c in zip(versions, counts, strict=True):
        version_of += [version] * c
    plans: list[_ParentPlan] = []
    for i in range(parents):
        surface = rng.choices(("cli", "desktop", "telegram"), weights=(60, 30, 10))[0]
        provider = rng.choices(("anthropic", "openai", "ollama", "openrouter"), weights=(52, 11, 32, 5))[0]
        plans.append(
            _ParentPlan(
                turns=turns[i],
                version=version_of[i],
                cwd=rng.choice(WORKSPACES),
                surface=surface,
                provider=provider,
            )
        )
    if profile.force_every_kind:
        seen: set[str] = set()
        for plan in plans:
            gen = APP_VERSIONS[plan.version]
            if gen not in seen:
                seen.add(gen)
                plan.forced = frozenset(
                    {"branch", "nudge", "presentation", "work", "goal", "epoch", "compaction"}
                )
                while plan.turns < 4:  # room for the forced branch and compaction
                    donor = max(plans, key=lambda p: (p.turns, -plans.index(p)))
                    if donor is plan or donor.turns <= 4:
                        break
                    donor.turns -= 1
                    plan.turns += 1
        plans[-1].surface = "telegram"
    # checkpoints: a share of sessions holds them; files spread over those sessions
    k = max(1, round(parents * profile.checkpoint_session_share))
    k = min(k, parents)
    chosen = sorted(rng.sample(range(parents), k))
    files = max(k, round(profile.turns * profile.checkpoint_files_per_turn))
    per = _split(files - k, [plans[i].turns for i in chosen]) if files > k else [0] * k
    sizes = [math.exp(rng.gauss(0, 0.8)) for _ in chosen]
    total_weight = sum(s * (1 + extra) for s, extra in zip(sizes, per, strict=True))
    target_total = files * profile.checkpoint_file_mean_bytes
    for idx, extra, s in zip(chosen, per, sizes, strict=True):
        plan = plans[idx]
        extra = min(extra, plan.turns - 1)
        effect = rng.sample(range(1, plan.turns), extra) if extra else []
        plan.checkpoint_turns = frozenset([0, *effect])
        file_bytes = min(profile.checkpoint_file_max_bytes, target_total * s / total_weight)
        plan.workspace_bytes = int(file_bytes * 3 / 4)
    for plan in plans:
        plan.scheduled = rng.random() < 0.08
    if profile.force_every_kind:
        plans[0].scheduled = True
    # worker sessions hang off tool calls of parent turns
    slots = [(i, t) for i, p in enumerate(plans) for t in range(p.turns)]
    for i, t in sorted(rng.sample(slots, min(children, len(slots)))):
        plans[i].child_turns = plans[i].child_turns | {t}
    return plans, children


class HomeWriter:
    """The state shared by every session of one home: clock, ids, pools, side ledgers."""

    def __init__(
        self,
        out: Path,
        profile: Profile,
        *,
        seed: int,
        layout: str,
        fsync: bool,
        progress: ProgressFn | None = None,
    ) -> None:
        self.out = out
        self.profile = profile
        self.seed = seed
        self.layout = layout
        self.fsync = fsync
        self.progress = progress
        self.clock = SynthClock(DEFAULT_START_NS, seed)
        self.ids = IdSource(self.clock, seed)
        self.rng = random.Random(f"home:{seed}")
        self.pools = ContentPools(seed)
        self.facts = HomeFacts(out, layout, profile, seed, self.clock, self.ids, self.pools)
        self.data = self.facts.data
        self.agent = self.facts.agent
        self.cache = out / "cache"
        self.compactions = [0, 0]  # shape A, shape B
        self.checkpoints_written = 0
        self.store = StoreWriter(self.cache)
        self.sinks = SideSinks.open(self.facts)
        self._sandbox: JsonlSink | None = None
        self._sandbox_sid = ""
        self._workspaces: dict[str, Workspace] = {}
        self._variants = 0
        self._child_seq = 0
        self._ledger_bytes = 0
        self._indexed_bytes = 0
        self._results = (0, 0)
        self._spread: dict[str, float] = {}
        self._not_indexed: list[tuple[Path, str, int]] = []
        self.side = sidecars.SideState(self.facts, self.sinks)
        # the per-kind writers of each event a session emits, in the order they run
        self._subscribers = Subscribers()
        on = self._subscribers.on
        on(CheckpointTaken, self._checkpoint)
        on(IntentRead, lambda e: self.side.intent_row(e.sw, e.act, e.stakes, e.tier))
        on(ApprovalAsked, lambda e: self.side.approval(e.sw, e.tool, e.denied))
        on(Remembered, lambda e: self.side.remember(e.sw, e.inp))
        on(ToolRan, lambda e: self.side.tool_row(e.sw, e.tool, e.tool_use_id, e.ok, e.duration_ms))
        on(TurnSettled, lambda e: self.side.settle(e.sw, e.turn))
        on(TurnEnded, lambda e: self.side.after_turn(e.sw, e.t))
        on(SessionEnded, self._index_session)
        on(SessionEnded, lambda e: self.side.after_session(e.sw, e.res))
        self.result = SynthResult(out=out, profile=profile.name, layout=layout, seed=seed)

    # -- paths --------------------------------------------------------------------------------

    def session_path(self, cwd: str, session_id: str) -> Path:
        return self.agent / "sessions" / workspace_key(cwd) / f"{session_id}.jsonl"

    def next_variant(self, rng: random.Random) -> int:
        """A capability surface for a new epoch: mostly a recent one, sometimes a new one."""
        if self._variants == 0 or rng.random() < 0.35:
            self._variants += 1
            return self._variants - 1
        return rng.randrange(max(0, self._variants - 4), self._variants)

    # -- what a session asks of its home, and the events it emits --------------------------------

    def emit(self, event: Event) -> None:
        """Hand one event of a session to the writers subscribed to its type."""
        self._subscribers.emit(event)

    def _checkpoint(self, e: CheckpointTaken) -> None:
        sw, label = e.sw, e.label
        sid = sw.spec.session_id
        ws = self._workspaces.get(sid)
        if ws is None:
            ws = Workspace(self.pools, random.Random(f"ws:{self.seed}:{sid}"), sw.spec.workspace_bytes)
            self._workspaces[sid] = ws
        else:
            ws.touch()
        sw.checkpoint_seq += 1
        store_checkpoint(self.agent, sid, sw.checkpoint_seq, self.clock.ts(), label, ws)
        self.checkpoints_written += 1

    def sandbox_execution(self, sw: Any, command: str, output: str, is_error: bool) -> int:
        if self._sandbox is None or self._sandbox_sid != sw.spec.session_id:
            if self._sandbox is not None:
                self._sandbox.close()
            self._sandbox = JsonlSink(self.agent / "sandbox" / "executions" / f"{sw.spec.session_id}.jsonl")
            self._sandbox_sid = sw.spec.session_id
        return self.side.sandbox_events(sw, self._sandbox, command, output, is_error)

    def spawn_child(self, parent: Any, instructions: str) -> str:
        self._child_seq += 1
        child_id = f"child-{self.clock.ns}-{self._child_seq}"
        spec = SessionSpec(
            session_id=child_id,
            cwd=parent.spec.cwd,
            app_version=parent.spec.app_version,
            generation=parent.gen,
            turns=0,
            surface=parent.spec.surface,
            provider=parent.provider,
            parent_session_id=parent.spec.session_id,
            child_task=instructions,
        )
        res = write_session(self, spec, random.Random(f"child:{self.seed}:{child_id}"))
        self.result.sessions += 1
        self.result.ledger_entries += res.entries
        return res.final_text

    def _index_session(self, e: SessionEnded) -> None:
        sw, res = e.sw, e.res
        self._workspaces.pop(sw.spec.session_id, None)  # a finished session takes no more checkpoints
        # Which sessions the server indexed is not recorded anywhere; index while the store is
        # below the measured share of ledger bytes (profile.store_ratio).
        size = res.path.stat().st_size
        self._ledger_bytes += size
        target = int(self.profile.store_ratio * self._ledger_bytes)
        if (
            not self._index(res.path, workspace_key(sw.spec.cwd), size, target)
            and len(self._not_indexed) < 10_000
        ):
            self._not_indexed.append((res.path, workspace_key(sw.spec.cwd), size))

    def _index(self, path: Path, key: str, size: int, max_bytes: int) -> bool:
        if self.store.import_session(path, key, max_bytes=max_bytes) is None:
            return False
        self._indexed_bytes += size
        return True

    def _top_up_store(self) -> None:
        """After the last session: index skipped sessions (an attach re-imports one), largest first,
        as long as the store stays within its share of the ledger bytes."""
        target = int(self.profile.store_ratio * self._ledger_bytes)
        for path, key, size in sorted(self._not_indexed, key=lambda c: (-c[2], str(c[0]))):
            if self.store.size_bytes() >= target * 0.995:
                break
            self._index(path, key, size, target)

    def spread(self, stream: str) -> float:
        """Next value in [0, 1) of a seeded golden-ratio sequence: draws that shape the per-turn
        mix (tool steps, nudges) cover their distribution evenly, so home-level rates hold at
        every seed instead of wandering with sampling noise."""
        k = self._spread.get(stream)
        if k is None:
            k = random.Random(f"spread:{self.seed}:{stream}").random()
        k = (k + 0.6180339887498949) % 1.0
        self._spread[stream] = k
        return k

    def result_size(self, rng: random.Random) -> int:
        """Size of the next file/output-like tool result: lognormal around the profile's mean,
        nudged so the running mean stays on it whatever the seed (a heavy tail drifts otherwise)."""
        prof = self.profile
        sigma = prof.tool_result_sigma
        median = prof.tool_result_mean / math.exp(sigma * sigma / 2)
        draw = median * math.exp(rng.gauss(0.0, sigma))
        n, total = self._results
        if total:
            draw *= min(1.5, max(0.6, prof.tool_result_mean * n / total))
        return int(max(40, min(prof.tool_result_cap, draw)))

    def result_written(self, size: int) -> None:
        """Feed back the bytes a drawn tool result really took (escaping, whole lines, JSON)."""
        n, total = self._results
        self._results = (n + 1, total + size)

    def request_message_chars(self, sw: Any) -> int:
        """Message chars (replay.md §10.1, tail included) of the step about to be dispatched.

        Built by the replay package's incremental request builder on the open ledger, with its
        default host parameters for the parts a Regime A ledger does not record (§7.6). The builder
        lives with the session writer, so it is released with the session.
        """
        if sw.request_builder is None:
            sw.request_builder = StepRequestBuilder(sw.log)
        return sw.request_builder.message_chars()

    # -- the whole home ---------------------------------------------------------------------------

    def build(self) -> SynthResult:
        profile = self.profile
        plans, _children = plan_sessions(profile, self.layout, self.seed)
        self.side.begin(plans)
        total = len(plans)
        done_turns = 0
        # glibc keeps the pages a long session freed resident when live blocks sit above them in the
        # heap (it only gives back the top), so the resident set crept up session after session
        # while the Python heap stayed the same. Handing the free pages back after each session
        # keeps it to what is live.
        trim_heap = _heap_trimmer()
        for i, plan in enumerate(plans):
            self.clock.advance_ms(profile.minutes_between_sessions * 60_000 * self.rng.uniform(0.2, 1.8))
            session_id = self.ids()
            spec = SessionSpec(
                session_id=session_id,
                cwd=plan.cwd,
                app_version=plan.version,
                generation=APP_VERSIONS[plan.version],
                turns=plan.turns,
                surface=plan.surface,
                provider=plan.provider,
                checkpoint_turns=plan.checkpoint_turns,
                workspace_bytes=plan.workspace_bytes,
                child_turns=plan.child_turns,
                forced=plan.forced,
            )
            self.side.session_plan = plan
            res = write_session(self, spec, random.Random(f"session:{self.seed}:{i}"))
            self.result.sessions += 1
            self.result.turns += res.turns
            self.result.ledger_entries += res.entries
            self.result.app_versions[plan.version] = self.result.app_versions.get(plan.version, 0) + 1
            done_turns += plan.turns
            if trim_heap is not None:
                trim_heap()
            if self.progress is not None:
                self.progress("sessions", i + 1, total)
        self._top_up_store()
        self.side.finish()
        if self._sandbox is not None:
            self._sandbox.close()
        self.sinks.close()
        self.store.close()
        r = self.result
        r.compactions_shape_a, r.compactions_shape_b = self.compactions
        r.checkpoints = self.checkpoints_written
        r.store_rows = self.store.rows
        r.cost_log_compactions = self.sinks.cost_log_compactions
        return r

    @property
    def now(self) -> str:
        return format_ts(self.clock.ns)


def build_home(
    out: str | Path,
    *,
    profile: str = "tiny",
    turns: int | None = None,
    sessions: int | None = None,
    seed: int = 0,
    layout: str = "g2",
    fsync: bool = True,
    progress: ProgressFn | None = None,
) -> SynthResult:
    """Write a complete synthetic vak home into ``out`` (which must be missing or empty).

    Same arguments give a byte-identical home. ``progress(stage, done, total)`` is called after each
    session.
    """
    if layout not in LAYOUTS:
        raise UsageError(f"unknown layout {layout!r}; choose one of: {', '.join(LAYOUTS)}")
    prof = get_profile(profile, turns=turns, sessions=sessions)
    out = Path(out).expanduser()
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"{out} exists and is not an empty directory; choose a new output directory")
    out.mkdir(parents=True, exist_ok=True)
    if layout == "v7":
        from vakaudit.synth.v7 import build_v7

        def g2(folder: Path) -> SynthResult:
            folder.mkdir()
            return HomeWriter(folder, prof, seed=seed, layout="g2", fsync=False, progress=progress).build()

        g2_result, keys, record = build_v7(out, g2, profile=prof.name, seed=seed, fsync=fsync)
        return replace(g2_result, out=out, layout="v7", ledger_entries=record.ledger_entries,
                       record=record.to_json(), keys=keys)
    return HomeWriter(out, prof, seed=seed, layout=layout, fsync=fsync, progress=progress).build()


def build_one_session(
    out: str | Path,
    *,
    app_version: str = "3.5.1",
    turns: int = 6,
    seed: int = 0,
    layout: str = "g2",
    fsync: bool = False,
    every_kind: bool = True,
) -> Path:
    """A home in ``out`` holding exactly one session ledger of ``app_version``; returns its path.

    ``every_kind`` forces the rare shapes into it (a branch, a nudge, work lines, a compaction of
    the generation's shape, an epoch change, a presentation in G2+) when ``turns`` >= 4.
    """
    if app_version not in APP_VERSIONS:
        raise UsageError(f"unknown app_version {app_version!r}; choose one of: {', '.join(APP_VERSIONS)}")
    if turns < 1:
        raise UsageError("turns must be at least 1")
    out = Path(out).expanduser()
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"{out} exists and is not an empty directory; choose a new output directory")
    out.mkdir(parents=True, exist_ok=True)
    base = get_profile("tiny")
    prof = replace(
        base,
        name="one-session",
        turns=turns,
        sessions=1,
        child_share=0.0,
        versions_g1=((app_version, 1.0),),
        versions_g2=((app_version, 1.0),),
        force_every_kind=every_kind,
    )
    HomeWriter(out, prof, seed=seed, layout=layout, fsync=fsync).build()
    (ledger,) = sorted(out.glob("agents/vak/sessions/*/*.jsonl"))
    return ledger
