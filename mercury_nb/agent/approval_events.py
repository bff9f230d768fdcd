"""The permission events: an action asked about, and the answer (or the denial) it got."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from mercury_nb.agent.event_lines import Data, Words, text_of
from mercury_nb.contract.permissions import AskedIn

ApprovalKind = Literal["permission-asked", "permission-answered"]


@dataclass(frozen=True)
class PermissionAsked(Words):
    """The permission mode asks the user about a call before it runs: question number
    ``request_id`` of the run (the approver is asked the same number), asked ``asked_in``
    (the panel, the cell, the terminal; None: nobody, so it is denied at once)."""

    kind: ClassVar[ApprovalKind] = "permission-asked"
    step: int
    tool: str
    what: str
    command: str | None = None
    suggested_rule: str | None = None
    detail: str = ""
    request_id: int = 1
    asked_in: AskedIn | None = None

    @staticmethod
    def words(data: Data) -> str | None:
        return f"asks permission to {text_of(data, 'what')}"


@dataclass(frozen=True)
class PermissionAnswered(Words):
    """What became of a call the mode stopped: ``allow-once``, ``always-allow`` (``rule``
    saved) or ``deny`` with ``why`` (the user, no way to ask, a timeout, the mode)."""

    kind: ClassVar[ApprovalKind] = "permission-answered"
    step: int
    tool: str
    what: str
    answer: Literal["allow-once", "always-allow", "deny"]
    rule: str | None = None
    why: str = ""

    @staticmethod
    def words(data: Data) -> str | None:
        what, answer = text_of(data, "what"), text_of(data, "answer")
        if answer == "always-allow":
            return f"allowed from now on ({text_of(data, 'rule')}): {what}"
        if answer == "allow-once":
            return f"allowed once: {what}"
        return f"denied: {what} ({text_of(data, 'why')})"
