"""What the user's own Deny leaves behind: a task that then cannot finish pauses naming it.

The user's "Deny" goes to the model as a tool result, and the task goes on: the model may
find another way. The task remembers the last action the user denied (:class:`UserDenial`,
forgotten when that action is allowed later in the run, see :func:`denial_after`). If the
task then ends without a completion, on what the denial may have caused (the gate or the
narration guard pausing, the model saying it is blocked or declining), the ending is the
honest pause :func:`after_user_denial` makes, naming the action and how to allow it; any
other ending (a completion, a stop, a budget, a provider, a question) stays as it is. A check
that ran after the last change and failed stays the ending's cause: the pause stays the
verification pause it is, and names the denial beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import assert_never

from mercury_nb.contract.endings import (
    Aborted,
    BlockedPause,
    BudgetPause,
    DeclinedPause,
    Ending,
    Failed,
    FilesMissingPause,
    NoChangesCompletion,
    NoToolSupport,
    Paused,
    ProviderFailure,
    QuestionPause,
    StepBudgetPause,
    TruncationPause,
    VerificationFailedPause,
    VerifiedCompletion,
    WindowTooSmall,
    WorkNotStartedPause,
)
from mercury_nb.contract.permissions.approval import ApprovalAnswer, allow_hint
from mercury_nb.contract.text_cut import clip

USER_DENIED_PAUSE = "you denied permission to {what} — allow it with {how}"
SAID_CHARS = 160
"""How much of the model's own words the pause keeps."""


@dataclass(frozen=True)
class UserDenial:
    """An action the user denied: ``what`` it does (as the ask named it) and the rule
    "Always allow" would have saved (None: none allows it alone)."""

    what: str
    rule: str | None = None


def denied_reason(denial: UserDenial) -> str:
    """The pause's words: the action the user denied, and how to allow it."""
    return USER_DENIED_PAUSE.format(what=denial.what, how=allow_hint(denial.what, denial.rule))


def denial_after(noted: UserDenial | None, what: str, rule: str | None,
                 answer: ApprovalAnswer, by_user: bool) -> UserDenial | None:
    """The denial a task remembers after an ask about ``what`` was answered ``answer``
    (``by_user``: the user gave it, not a timeout or a failed ask): a user's deny is noted,
    an allow of the noted action forgets it, anything else keeps what was noted."""
    if answer == "deny":
        return UserDenial(what, rule) if by_user else noted
    if noted is not None and noted.what == what:
        return None
    return noted


def after_user_denial(ending: Ending, denial: UserDenial | None) -> Ending:
    """How a task ends that the user denied ``denial`` in (None: nothing denied); see the
    module for which endings the denial replaces."""
    if denial is None:
        return ending
    reason = denied_reason(denial)
    match ending:
        case WorkNotStartedPause(blocker=blocker):
            return Paused(reason, blocker)
        case BlockedPause(reason=said) | DeclinedPause(reason=said):
            return Paused(f"{reason} (the model said: {clip(said, SAID_CHARS)})"
                          if said.strip() else reason)
        case VerificationFailedPause(last_check=check, stale=False) if check is not None:
            return replace(ending, denied=reason)  # a check that ran and failed stays the cause
        case VerificationFailedPause() | FilesMissingPause():
            return Paused(reason)
        case (VerifiedCompletion() | NoChangesCompletion() | Aborted() | StepBudgetPause()
              | TruncationPause() | Paused() | BudgetPause() | QuestionPause()
              | ProviderFailure() | Failed() | WindowTooSmall() | NoToolSupport()):
            return ending
        case _ as unreachable:
            assert_never(unreachable)
