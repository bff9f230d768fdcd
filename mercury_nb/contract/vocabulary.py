"""Shared vocabulary of every layer: notice and decision kinds, turn verdicts, tool choices."""

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


MUTATING_TOOLS: tuple[str, ...] = (
    "create_file",
    "write_file",
    "edit_file",
    "delete_file",
    "run_command",
    "edit_notebook_cell",
    "insert_notebook_cell",
    "delete_notebook_cell",
    "run_in_kernel",
    "run_cells",
    "run_cells_in_kernel",
)
"""The tools that change the workspace: the calls a guard round's first step must make (every
tool is offered there as on every step; the round fails when none of its calls is one of
these), and the file tools a step's mutation is counted by; ``run_in_kernel`` changes the
user's kernel, not files ("ran code in your kernel" in the banner), as ``run_cells_in_kernel``
does; ``run_cells`` writes the outputs of the cells it ran into the notebook (the change
summary shows them), and its run is also the notebook's check: the gate takes a notebook run as
evidence even when it is itself the last change, since all it wrote is its own outputs."""

KERNEL_RUN_TOOLS: tuple[str, ...] = ("run_in_kernel", "run_cells_in_kernel")
"""The tools that run code in the user's kernel: what they change there no undo takes back."""

NON_INVESTIGATING_TOOLS: tuple[str, ...] = ("finish", "ask_user", "notebook_check")
"""Non-mutating calls that do not look at the workspace for the model: ending a turn, asking
the user, the agent's own notebook run. Every other non-mutating call that ran (``read_file``,
``list_dir``, ``read_notebook``, a read-only command, whatever its exit code) is an
investigation: an answer after one may end a task that demands no change."""
