"""Progress events the agent loop emits for widgets, plain text and logs; each names its kind.

Every event class carries its ``kind`` (a ClassVar of the closed :data:`AgentEventKind`,
written here next to the classes; a notice's is its ``NoticeKind``), and
:func:`recorded_fields` gives its fields as the ledger stores them, so recording, watching
and showing an event need no table of classes elsewhere: a new event is its class here (its
kind in :data:`AgentEventKind`, the class in :data:`AgentEvent`, its line for people in its
``words``), and a view that has nothing particular to show for it shows it by default.

``words(data)`` says an event in plain words from its recorded fields (``show``; the panel's
twin: ``labextension/src/events.ts``); None: no line for people; by default its ``text``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Literal, get_args

from mercury_nb.agent.approval_events import ApprovalKind, PermissionAnswered, PermissionAsked
from mercury_nb.agent.event_lines import (
    DECISION_WORDS,
    VERDICT_WORDS,
    Data,
    Words,
    chain_words,
    text_of,
    tool_words,
)
from mercury_nb.contract.outcome import TaskOutcome
from mercury_nb.contract.recovery.memory_governor import PressureReason
from mercury_nb.contract.recovery.stall_watchdog import WatchdogState, pulse_text
from mercury_nb.contract.spend import with_context
from mercury_nb.contract.vocabulary import DecisionKind, NoticeKind

AgentEventKind = Literal[
    "task-started",
    "step-started",
    "text-delta",
    "tool-started",
    "tool-finished",
    "tool-progress",
    "pulse",
    "memory-pressure-pause",
    "step-ended",
    "turn-ended",
    "task-finished",
    ApprovalKind,
    NoticeKind,
]
"""The kind of every event class below (a test checks that the two agree); the ledger adds
its own (``ledger.records.LedgerKind``)."""


@dataclass(frozen=True)
class TaskStarted(Words):
    kind: ClassVar[AgentEventKind] = "task-started"
    task_id: str
    task: str
    model: str
    max_steps: int
    attached: tuple[str, ...] = ()
    """The kernel variables whose summaries ``@name`` attached to the first request."""

    @staticmethod
    def words(data: Data) -> str | None:
        return f"started with {chain_words(data)}"


@dataclass(frozen=True)
class StepStarted(Words):
    kind: ClassVar[AgentEventKind] = "step-started"
    step: int
    max_steps: int
    model: str
    tokens: int = 0
    """Tokens the task used before this step, every model and sub-agent (0: none reported)."""
    cost_usd: float | None = None
    """Their estimated USD (None: no price known for any of them, or none reported)."""
    unpriced: tuple[str, ...] = field(default=(), metadata={"recorded": False})
    """Models whose tokens have no known price: counted as tokens only (live views only)."""
    context: int | None = None
    """How full this request fills the usable context window, in percent (None: unknown)."""

    @staticmethod
    def words(data: Data) -> str | None:
        return f"step {data.get('step', '?')}"


@dataclass(frozen=True)
class TextDelta(Words):
    kind: ClassVar[AgentEventKind] = "text-delta"
    text: str

    words = staticmethod(lambda data: None)  # the live views show the streamed text


@dataclass(frozen=True)
class ToolStarted(Words):
    kind: ClassVar[AgentEventKind] = "tool-started"
    step: int
    name: str
    summary: str
    command: str | None = None
    """For run_command: the command line it runs."""

    @staticmethod
    def words(data: Data) -> str | None:
        return tool_words(data)


@dataclass(frozen=True)
class ToolFinished(Words):
    kind: ClassVar[AgentEventKind] = "tool-finished"
    step: int
    name: str
    ok: bool
    summary: str

    @staticmethod
    def words(data: Data) -> str | None:  # a tool that went fine: its start said it
        return None if data.get("ok", True) else f"failed: {tool_words(data)}"


@dataclass(frozen=True)
class ToolProgress(Words):
    """How far the running tool call is, in its own words (run_cells: ``cell 7/12``); the
    live status shows it with the call's seconds until the next progress or its end."""

    kind: ClassVar[AgentEventKind] = "tool-progress"
    step: int
    name: str
    text: str

    words = staticmethod(lambda data: None)  # live only: the status line shows it


@dataclass(frozen=True)
class Notice(Words):
    """A user-facing line (a continuation, a provider switch, a forced round); ``kind`` says
    which, as a type: nobody parses ``text``."""

    text: str
    kind: NoticeKind = "notice"


@dataclass(frozen=True)
class Pulse(Words):
    """The stall watchdog's live pulse: ``waiting for the model · N s`` (or ``running <cmd>
    · N s``) until the next sign of progress; ``activity``: what it waits on, ``silent_s``:
    whole seconds of silence (or of ``command``). ``watch``: the watchdog state it was decided
    in (None: unknown), so :meth:`text_at` redraws the line later (the seconds grow)."""

    kind: ClassVar[AgentEventKind] = "pulse"
    text: str
    activity: str = ""
    silent_s: int = 0
    command: str | None = None
    watch: WatchdogState | None = field(default=None, metadata={"recorded": False})
    context: int | None = None
    """How full the waiting request fills the context window, in percent (``text`` ends
    with ``· context 63%``; None: no window known)."""

    @staticmethod
    def words(data: Data) -> str | None:
        return text_of(data, "text") or "waiting for the model"

    def text_at(self, now_s: float) -> str:
        """The pulse line at ``now_s`` (``text`` itself when the state is unknown)."""
        if self.watch is None:
            return self.text
        return with_context(pulse_text(self.watch, now_s * 1000.0), self.context)


@dataclass(frozen=True)
class MemoryPressurePause(Words):
    """The memory governor paused the task: the conversation (``reason`` ``context``) or the
    kernel (``memory``) stayed too large after compacting. With the numbers it paused on: the
    prompt's estimated tokens against the budget, and the kernel's RSS against its limit
    (None when not measured, or no limit is set); ``why`` is the pause banner's words."""

    kind: ClassVar[AgentEventKind] = "memory-pressure-pause"
    reason: PressureReason
    why: str
    prompt_tokens: int
    budget_tokens: int
    rss_mb: float | None
    limit_mb: int | None

    @staticmethod
    def words(data: Data) -> str | None:
        tokens = f" · {data.get('prompt_tokens')}/{data.get('budget_tokens')} tokens" \
            if isinstance(data.get("prompt_tokens"), int) else ""
        rss = data.get("rss_mb")
        memory = f" · {round(rss)}/{data.get('limit_mb')} MB" \
            if isinstance(rss, int | float) else ""
        return f"paused on {text_of(data, 'reason')}{tokens}{memory}: {text_of(data, 'why')}"


@dataclass(frozen=True)
class StepEnded(Words):
    """A step (one model response and every one of its tool calls) finished: the
    conversation holds it whole, never a tool call without its result. ``checkpoint(with
    snapshot)`` returns the resumable state as JSON-ready data that the loop no longer
    changes (the start snapshot only when asked: reading it stats the workspace);
    ``changed``: a call of this step may have changed files (the snapshot's "before" texts
    grow). The ledger keeps the newest one per batch of progress, so a killed process
    loses at most the step in flight."""

    kind: ClassVar[AgentEventKind] = "step-ended"
    task_id: str
    step: int
    changed: bool
    checkpoint: Callable[[bool], dict[str, Any]]

    @staticmethod
    def words(data: Data) -> str | None:
        return None  # the turn's end says what follows


@dataclass(frozen=True)
class TurnEnded(Words):
    """A turn ended and the pure core decided what follows; ``checkpoint()`` returns the
    resumable state as JSON-ready data (computed only when a listener asks)."""

    kind: ClassVar[AgentEventKind] = "turn-ended"
    task_id: str
    verdict: str | None
    """The verdict of the turn that ended; None when the task paused or failed before a
    request (memory or context pressure, a window too small): no turn ended."""
    decision: DecisionKind
    checkpoint: Callable[[], dict[str, Any]]

    @staticmethod
    def words(data: Data) -> str | None:
        verdict, decision = text_of(data, "verdict"), text_of(data, "decision")
        parts = [VERDICT_WORDS.get(verdict, verdict), DECISION_WORDS.get(decision, decision)]
        return ", ".join(part for part in parts if part) or "a turn ended"


@dataclass(frozen=True)
class TaskFinished(Words):
    kind: ClassVar[AgentEventKind] = "task-finished"
    outcome: TaskOutcome

    @staticmethod
    def words(data: Data) -> str | None:
        return f"ended: {text_of(data, 'status') or 'finished'}"


AgentEvent = (
    TaskStarted
    | StepStarted
    | TextDelta
    | ToolStarted
    | ToolFinished
    | ToolProgress
    | Notice
    | Pulse
    | MemoryPressurePause
    | StepEnded
    | TurnEnded
    | TaskFinished
    | PermissionAsked
    | PermissionAnswered
)
EventSink = Callable[[AgentEvent], None]

AGENT_EVENT_KINDS: frozenset[AgentEventKind] = frozenset(get_args(AgentEventKind))
"""Every kind an event of :data:`AgentEvent` can have."""

PROGRESS_KINDS: frozenset[AgentEventKind] = frozenset(
    {"step-started", "text-delta", "tool-started", "tool-finished", "tool-progress", "pulse"})
"""Kinds for live watchers only: ``show`` leaves them out (any other kind, a new one too, in)."""

STREAMED_KINDS: frozenset[AgentEventKind] = frozenset({"text-delta"})
"""Kinds recorded only coalesced, for live watchers (one row per ``stream_record_ms``, dropped
when the task finishes: :mod:`mercury_nb.ledger.streamed`)."""


def recorded_fields(event: AgentEvent) -> dict[str, Any]:
    """``event``'s fields as the ledger stores them (JSON-ready; ``kind`` is its column):
    every field but those marked ``recorded: False`` (live-only state, such as a pulse's
    watchdog clock)."""
    return {item.name: getattr(event, item.name) for item in fields(event)
            if item.name != "kind" and item.metadata.get("recorded", True)}


def line_of_kind(kind: str, data: Data) -> str | None:
    """The line of an event of ``kind`` (its class's ``words``; a notice kind, or one this
    version does not know, reads as a notice) from its recorded ``data``."""
    for cls in get_args(AgentEvent):
        if cls.kind == kind:
            return cls.words(data)
    return Notice.words(data)


def ignore_events(event: AgentEvent) -> None:
    """The sink used when nobody listens."""
