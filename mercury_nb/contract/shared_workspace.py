"""Whether a new task may start in a workspace where other tasks are running (pure decision)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from mercury_nb.contract.text_cut import clip

BUSY_MESSAGE = (
    'Another task is running in this workspace: {task_id} "{task}". Two tasks changing the '
    "same files would mix their changes, so this one was not started. Stop it with "
    "`python -m mercury_nb stop {task_id}` (or `%mercury stop {task_id}` in the notebook), or "
    "wait until it ends; a question asked with --chat may run meanwhile."
)
TASK_EXCERPT_CHARS = 80
"""Characters of a task's text shown where it is named (a refusal, a sub-agent's start)."""


def task_excerpt(task: str) -> str:
    """``task`` on one line, whitespace collapsed, cut to :data:`TASK_EXCERPT_CHARS` (``…``)."""
    line = " ".join(task.split())
    return clip(line, TASK_EXCERPT_CHARS)  # redacted before the cut


@dataclass(frozen=True)
class WorkspaceOccupant:
    """A task the ledger shows ``running`` in the same workspace, and whether its owning
    process still runs (in any process: a kernel or a CLI)."""

    task_id: str
    task: str
    owner_alive: bool
    sub_agent: bool = False
    """A delegate_task sub-agent: never named, its parent runs too (and a stop of the parent
    ends both)."""


@dataclass(frozen=True)
class StartAllowed:
    """Nothing that may change the workspace's files is running there."""


@dataclass(frozen=True)
class WorkspaceBusy:
    """Refuse: ``running`` may change the same files; ``message`` names it and how to stop it."""

    running: WorkspaceOccupant
    message: str


StartDecision = StartAllowed | WorkspaceBusy


def decide_start(mode: Literal["execute", "chat"],
                 running: Sequence[WorkspaceOccupant]) -> StartDecision:
    """A ``chat`` task (a question: it never forces changes) always starts. Any other task is
    refused while a task whose owner is alive runs in the same workspace (the most recent
    one is named); a task left ``running`` by a dead process does not count, and a running
    sub-agent is not named (its parent is)."""
    if mode == "chat":
        return StartAllowed()
    live = [task for task in running if task.owner_alive and not task.sub_agent]
    if not live:
        return StartAllowed()
    first = live[0]
    return WorkspaceBusy(first, BUSY_MESSAGE.format(task_id=first.task_id,
                                                    task=task_excerpt(first.task)))
