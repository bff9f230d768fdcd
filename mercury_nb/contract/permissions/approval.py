"""What an approval asks and answers, and the words of a denial and of the pause it causes.

An :class:`~mercury_nb.contract.permissions.decide.Ask` becomes an :class:`ApprovalRequest`
for a front end's approver; its answer is one of :data:`APPROVAL_ANSWERS`. Asking fails
closed: no approver, a timeout or an error while asking answers ``deny`` with the reason
(:data:`NO_APPROVER`, :data:`TIMED_OUT`, :data:`ASK_FAILED`), and such a denial pauses the
task with :func:`pause_reason`, which names the action and how to allow it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

ApprovalAnswer = Literal["allow-once", "always-allow", "deny"]
APPROVAL_ANSWERS: tuple[ApprovalAnswer, ...] = get_args(ApprovalAnswer)

AskedIn = Literal["panel", "cell", "terminal"]
"""Where a run's approver asks, so where a question can be answered: the JupyterLab panel
(over REST), the ``%%mercury`` cell's buttons, or the CLI's terminal."""
ASKED_IN: tuple[AskedIn, ...] = get_args(AskedIn)

NO_APPROVER = "nobody can be asked here (no terminal, widget or panel)"
TIMED_OUT = "no answer came within {seconds:g} s"
ASK_FAILED = "asking failed: {error}"
USER_DENIED = "the user denied it"


@dataclass(frozen=True)
class ApprovalRequest:
    """One question to the user: the ``tool`` call and ``what`` it does, the exact
    ``command`` (a command's), ``detail`` (the diff or code, when there is one), the rule
    "Always allow" would save (None: only "Allow once" and "Deny") and ``request_id``, its
    number in the run (the permission edge numbers a run's questions from 1; a front end
    that answers by number, the panel, names it)."""

    tool: str
    what: str
    command: str | None = None
    detail: str = ""
    suggested_rule: str | None = None
    request_id: int = 1


def denied_text(reason: str) -> str:
    """The tool result the model gets for a denied call."""
    return f"denied: {reason}"


def allow_hint(what: str, rule: str | None) -> str:
    """How to allow the action ``what`` (``rule``: the one rule that allows it, if any)."""
    if rule is not None:
        return f'--allow "{rule}" or --permissions auto'
    if what.startswith("run "):
        return "--allow for each of its parts, or --permissions auto"
    return "--permissions auto"


def pause_reason(what: str, rule: str | None) -> str:
    """Why a task paused on an action nobody could allow, and how to allow it."""
    return f"needs permission to {what} — allow it with {allow_hint(what, rule)}"
