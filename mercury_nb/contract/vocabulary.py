"""Shared vocabulary: notice kinds, decision kinds and tool choices, used by every layer."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

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
