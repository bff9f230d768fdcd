"""Progress events the agent loop emits for widgets, plain text and logs; each names its kind.

Every event class carries its ``kind`` (a ClassVar of the closed
:data:`~mercury_nb.contract.vocabulary.EventKind`; a notice's is its ``NoticeKind``), and
:func:`recorded_fields` gives its fields as the ledger stores them, so recording, watching
and showing an event need no table of classes: a new event is its class here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from mercury_nb.contract.outcome import TaskOutcome
from mercury_nb.contract.recovery.memory_governor import PressureReason
from mercury_nb.contract.recovery.stall_watchdog import WatchdogState, pulse_text
from mercury_nb.contract.vocabulary import DecisionKind, EventKind, NoticeKind


@dataclass(frozen=True)
class TaskStarted:
    kind: ClassVar[EventKind] = "task-started"
    task_id: str
    task: str
    model: str
    max_steps: int


@dataclass(frozen=True)
class StepStarted:
    kind: ClassVar[EventKind] = "step-started"
    step: int
    max_steps: int
    model: str


@dataclass(frozen=True)
class TextDelta:
    kind: ClassVar[EventKind] = "text-delta"
    text: str


@dataclass(frozen=True)
class ToolStarted:
    kind: ClassVar[EventKind] = "tool-started"
    step: int
    name: str
    summary: str
    command: str | None = None
    """For run_command: the command line it runs."""


@dataclass(frozen=True)
class ToolFinished:
    kind: ClassVar[EventKind] = "tool-finished"
    step: int
    name: str
    ok: bool
    summary: str


@dataclass(frozen=True)
class Notice:
    """A user-facing line: a continuation, a provider switch, a forced round. ``kind`` says
    which, as a type (nobody parses ``text`` to find out)."""

    text: str
    kind: NoticeKind = "notice"


@dataclass(frozen=True)
class Pulse:
    """The stall watchdog's live pulse: ``Still working — <activity> · N s silent`` (or
    ``Still working — running <cmd> · N s``); shown until the next sign of progress.
    ``activity`` is what it waits on, ``silent_s`` the whole seconds of silence (or of the
    running ``command``), both as of the decision.

    ``watch`` is the watchdog state it was decided in (None when unknown): :meth:`text_at`
    redraws the line for a later time on the watchdog's clock (``time.monotonic`` seconds),
    so a live view shows the seconds growing.
    """

    kind: ClassVar[EventKind] = "pulse"
    text: str
    activity: str = ""
    silent_s: int = 0
    command: str | None = None
    watch: WatchdogState | None = field(default=None, metadata={"recorded": False})

    def text_at(self, now_s: float) -> str:
        """The pulse line at ``now_s`` (``text`` itself when the state is unknown)."""
        return self.text if self.watch is None else pulse_text(self.watch, now_s * 1000.0)


@dataclass(frozen=True)
class MemoryPressure:
    """The memory governor paused the task: the conversation (``reason`` ``context``) or the
    kernel (``memory``) stayed too large after compacting; ``why`` is the pause banner's
    words."""

    kind: ClassVar[EventKind] = "memory-pressure"
    reason: PressureReason
    why: str


@dataclass(frozen=True)
class TurnEnded:
    """A turn ended and the pure core decided what follows; ``checkpoint()`` returns the
    resumable state as JSON-ready data (computed only when a listener asks)."""

    kind: ClassVar[EventKind] = "turn-ended"
    task_id: str
    verdict: str | None
    """The verdict of the turn that ended; None when the task paused or failed before a
    request (memory or context pressure, a window too small): no turn ended."""
    decision: DecisionKind
    checkpoint: Callable[[], dict[str, Any]]


@dataclass(frozen=True)
class TaskFinished:
    kind: ClassVar[EventKind] = "task-finished"
    outcome: TaskOutcome


AgentEvent = (
    TaskStarted
    | StepStarted
    | TextDelta
    | ToolStarted
    | ToolFinished
    | Notice
    | Pulse
    | MemoryPressure
    | TurnEnded
    | TaskFinished
)
EventSink = Callable[[AgentEvent], None]


def recorded_fields(event: AgentEvent) -> dict[str, Any]:
    """``event``'s fields as the ledger stores them (JSON-ready; ``kind`` is its column):
    every field but those marked ``recorded: False`` (live-only state, such as a pulse's
    watchdog clock)."""
    return {item.name: getattr(event, item.name) for item in fields(event)
            if item.name != "kind" and item.metadata.get("recorded", True)}


def ignore_events(event: AgentEvent) -> None:
    """The sink used when nobody listens."""
