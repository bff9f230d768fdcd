"""Shared vocabulary: event and notice kinds, decision kinds and tool choices, for every layer."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal, get_args

NoticeKind = Literal[
    "notice",
    "provider-switch",
    "guard-round",
    "continuation",
    "verification",
    "compaction",
    "stall",
    "subagent",
]
"""What a user-facing notice line is about; carried as a type, never parsed from its text."""

EventKind = Literal[
    "task-started",
    "resume",
    "step-started",
    "text-delta",
    "tool-started",
    "tool-finished",
    "pulse",
    "turn-ended",
    "task-finished",
    "stop-requested",
    "recovery",
    "memory-pressure",
    NoticeKind,
]
"""Every kind of event a run emits or records, the one closed set: each event class names its
own (``kind``, a ClassVar; a notice's is its ``NoticeKind``), the ledger stores it as it is,
and watchers match on it. ``resume`` is a resumed task's start, ``stop-requested`` and
``recovery`` (a task left running by a dead process) are the ledger's own."""

EVENT_KINDS: frozenset[EventKind] = frozenset(get_args(EventKind))

PROGRESS_KINDS: frozenset[EventKind] = frozenset(
    {"step-started", "tool-started", "tool-finished", "pulse"})
"""Kinds recorded for live watchers only: a task's summary (``show``) leaves them out."""

STREAMED_KINDS: frozenset[EventKind] = frozenset({"text-delta"})
"""Kinds shown live and never recorded (streamed tokens never reach the ledger)."""

DecisionKind = Literal["finish", "next-turn", "retry-step", "guard-round"]
"""Which decision the turn router took at a turn end (see ``RouterDecision``)."""

ToolChoice = Literal["auto", "required", "none"]
"""``tool_choice`` of a model request: the router decides it, the transport sends it."""


class TurnVerdict(StrEnum):
    """Why the loop stopped asking the model, and so which recovery path applies (decided by
    :func:`~mercury_nb.contract.turns.turn_verdict.classify_turn_end`)."""

    TEXT_STOP = "text-stop"
    STEPS_EXHAUSTED = "steps-exhausted"
    INTERRUPTED = "interrupted"
    TRUNCATED = "truncated"
    ABORTED = "aborted"


MUTATING_TOOLS: tuple[str, ...] = (
    "create_file",
    "write_file",
    "edit_file",
    "delete_file",
    "run_command",
    "edit_notebook_cell",
    "insert_notebook_cell",
)
"""The tools that change the workspace: the calls a guard round's first step must make (every
tool is offered there as on every step; the round fails when none of its calls is one of
these), and the file tools a step's mutation is counted by."""
