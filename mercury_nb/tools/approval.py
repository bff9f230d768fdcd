"""The approval seam: the Approver a front end injects, and a task's permission state."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from mercury_nb.contract.permissions import ApprovalAnswer, ApprovalRequest, AskedIn


class Approver(Protocol):
    """Asks the user about one action (a terminal prompt, the cell's buttons, the panel);
    answers within ``timeout_s`` or raises. Whoever calls it fails closed: a timeout or an
    error is a denial."""

    async def __call__(self, request: ApprovalRequest, timeout_s: float) -> ApprovalAnswer: ...


@dataclass
class Permissions:
    """A task's permission state: who approves (None: nobody can be asked, every ask is
    denied), the rules allowed beyond the config's (the workspace's saved ones, and those
    "Always allow" added during the task), where "Always allow" saves a rule for the
    workspace (None: for this task only; a blocking write, called off the loop), and how
    many questions this run has asked (the permission edge numbers each from it; a run, a
    start or a continue, starts at 0, and its sub-agents share it); ``asked_in``: where the
    approver asks (each question's event says so, so a view that cannot answer it says
    where it can be answered)."""

    approver: Approver | None = None
    asked_in: AskedIn | None = None
    rules: list[str] = field(default_factory=list)
    save_rule: Callable[[str], None] | None = None
    asked: int = 0
