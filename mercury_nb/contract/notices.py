"""Shared vocabulary of progress: the closed set of notice kinds and decision kinds."""

from __future__ import annotations

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
