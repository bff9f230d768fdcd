"""Every way a task can end, as a closed union; only two of them are completions.

A completion is impossible to build without its proof: ``VerifiedCompletion`` takes
evidence (a passing ``Verified`` check or a ``ReadBack``), ``NoChangesCompletion`` says
how "no changes" was measured. Every pause and failure is its own type, so the banner
and the status follow from the type, never from a flag.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, assert_never

from mercury_nb.contract.gate.verification import CheckRecord, ReadBack, Verified
from mercury_nb.contract.redaction import Masked
from mercury_nb.contract.spend import BudgetHit
from mercury_nb.contract.task_status import EndingStatus as EndingStatus  # re-exported


@dataclass(frozen=True)
class VerifiedCompletion:
    """Done, with evidence that ran after the last change."""

    evidence: Verified | ReadBack

    def __post_init__(self) -> None:
        if not isinstance(self.evidence, Verified | ReadBack):
            raise TypeError(f"a completion needs Verified or ReadBack evidence: {self.evidence!r}")


@dataclass(frozen=True)
class NoChangesCompletion:
    """Answered; git (or a content snapshot outside git) confirms nothing changed."""

    verified_by: Literal["git", "snapshot"]
    unread: tuple[str, ...] = ()
    """Workspace files the answer talks about that the task never read (as the answer wrote
    them); the banner says "answered without reading …"."""

    def __post_init__(self) -> None:
        if self.verified_by not in ("git", "snapshot"):
            raise ValueError(f"no-changes needs git or snapshot: {self.verified_by!r}")


@dataclass(frozen=True)
class Blocker:
    """The last failed mutating tool call: what stood in the way."""

    tool: str
    result: str


@dataclass(frozen=True)
class StepBudgetPause:
    """The step budget and every automatic continuation were used up."""

    continuations: int


@dataclass(frozen=True)
class WorkNotStartedPause:
    """The model never landed a change (narration guard exhausted)."""

    blocker: Blocker | None


@dataclass(frozen=True)
class VerificationFailedPause:
    """The changes are in, but no passing check ran after them.

    ``last_check`` is the newest check (None when none ran); ``stale`` when it ran
    before the latest change. A fresh check here must have failed.
    """

    last_check: CheckRecord | None
    stale: bool
    requested: str = ""
    """The run the task asks for (```sleep 300```, ``hello.py``) when it is what never
    passed: the banner names it instead of speaking of changes and checks."""
    denied: str = ""
    """What the user denied earlier in the run and how to allow it, said beside the failed
    check (:func:`~mercury_nb.contract.user_denials.after_user_denial`)."""

    def __post_init__(self) -> None:
        if self.stale and self.last_check is None:
            raise ValueError("a stale check needs the check")
        if not self.stale and self.last_check is not None and self.last_check.passed:
            raise ValueError("a passing fresh check is evidence, not a verification failure")


@dataclass(frozen=True)
class FilesMissingPause:
    """Files the task asks to create or write are not on disk at the end (measured)."""

    missing: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.missing:
            raise ValueError("a files-missing pause needs the missing files")


@dataclass(frozen=True)
class TruncationPause:
    """Replies kept hitting the output-token limit through every resume round."""

    rounds: int


@dataclass(frozen=True)
class Paused:
    """Any other honest, resumable pause (doom loop, stall, memory pressure, ...)."""

    reason: str
    blocker: Blocker | None = None


@dataclass(frozen=True)
class BudgetPause:
    """A spending budget (``max_cost_usd`` or ``max_tokens``) was reached: paused before the
    next request; a continue with a higher budget goes on."""

    hit: BudgetHit


@dataclass(frozen=True)
class BlockedPause:
    """The model said it could not do the work (its ``finish`` call, or its prose), in a
    task that asked for work; ``reason`` is what it said stood in the way."""

    reason: str


@dataclass(frozen=True)
class DeclinedPause:
    """A task that demands a change, and the model declined to make any: it chose the typed
    "no change needed" (``finish`` ``no_change``) with nothing changed. Never a completion;
    ``reason`` is what it said."""

    reason: str


@dataclass(frozen=True)
class QuestionPause:
    """The model ended by asking the user something the work waits on."""

    question: str


@dataclass(frozen=True)
class ProviderAttempt:
    """One provider of the chain and the first error it gave."""

    name: str
    reason: Masked
    permanent: bool = False
    """It refused the credentials or the model (401, 403, 404; ``provider_policy.
    is_permanent``): trying it again with the same settings cannot succeed."""


@dataclass(frozen=True)
class ProviderFailure:
    """Every provider of the chain failed. Its texts came masked (where each error entered
    the task): the banner and the outcome show them as they are."""

    last_error: Masked
    providers: tuple[ProviderAttempt, ...] = ()

    @property
    def permanent(self) -> bool:
        """Every provider refused for good: a continue with the same settings cannot help."""
        return bool(self.providers) and all(p.permanent for p in self.providers)


@dataclass(frozen=True)
class Failed:
    """The task could not go on for a reason that is not a provider's."""

    reason: str


@dataclass(frozen=True)
class WindowTooSmall:
    """The model's context window cannot hold what every request carries (the system prompt
    and the tool definitions, or those with the task), so no request can be sent: a failure,
    since continuing with the same window cannot help. Token counts are estimates."""

    window: int
    budget: int
    """Prompt tokens the window leaves after ``reply_tokens`` are reserved for the reply."""
    reply_tokens: int
    system_tokens: int
    tools_tokens: int
    """The tool definitions that were measured (the compact set's when ``compact``)."""
    compact: bool
    task_tokens: int = 0
    """Above zero: the system prompt and the tools fit, but not with the task."""
    compact_tokens: int | None = None
    """The compact tool set's size, when switching to it would make the request fit."""
    larger_window: int = 8192
    """A window that holds the full tool set comfortably (the fix to suggest)."""


@dataclass(frozen=True)
class NoToolSupport:
    """The model (or its server) does not take tools, so no change can ever be made: a
    failure no "continue" can cure. ``evidence``: the server ``reported`` it, or the model
    ``observed`` ignoring ``ignored`` forced tool calls; ``model`` names it. ``window``:
    the context window cannot hold the tool definitions either."""

    model: str
    evidence: Literal["reported", "observed"]
    ignored: int = 0
    window: WindowTooSmall | None = None
    """The window is too small for the tool definitions as well (the banner names both)."""


@dataclass(frozen=True)
class Aborted:
    """Stopped by the user (Stop button) or an interrupt; nothing is rolled back."""

    by: Literal["stop", "interrupt"] = "stop"


Ending = (
    VerifiedCompletion
    | NoChangesCompletion
    | StepBudgetPause
    | WorkNotStartedPause
    | VerificationFailedPause
    | FilesMissingPause
    | TruncationPause
    | Paused
    | BudgetPause
    | BlockedPause
    | DeclinedPause
    | QuestionPause
    | ProviderFailure
    | Failed
    | WindowTooSmall
    | NoToolSupport
    | Aborted
)


def status_of(ending: Ending) -> EndingStatus:
    """Only the two completion types map to ``completed``."""
    match ending:
        case VerifiedCompletion() | NoChangesCompletion():
            return "completed"
        case (
            StepBudgetPause()
            | WorkNotStartedPause()
            | VerificationFailedPause()
            | FilesMissingPause()
            | TruncationPause()
            | Paused()
            | BudgetPause()
            | BlockedPause()
            | DeclinedPause()
            | QuestionPause()
        ):
            return "paused"
        case ProviderFailure() | Failed() | WindowTooSmall() | NoToolSupport():
            return "failed"
        case Aborted():
            return "aborted"
        case _ as unreachable:
            assert_never(unreachable)


def resumable(ending: Ending) -> bool:
    """Whether a "continue" of this ending can succeed, so a banner may promise it and a
    front end may offer it. A completion has nothing to resume; a model without tool support,
    or a window too small for what every request carries, fails the same way however often
    it is continued; so do providers that all refused the key or the model (401, 403, 404),
    while rate limits, server errors and timeouts pass and may be continued."""
    match ending:
        case VerifiedCompletion() | NoChangesCompletion() | NoToolSupport() | WindowTooSmall():
            return False
        case ProviderFailure(permanent=True):
            return False
        case (
            StepBudgetPause()
            | WorkNotStartedPause()
            | VerificationFailedPause()
            | TruncationPause()
            | BlockedPause()
            | DeclinedPause()
            | QuestionPause()
            | FilesMissingPause()
            | Paused()
            | BudgetPause()
            | ProviderFailure()
            | Failed()
            | Aborted()
        ):
            return True
        case _ as unreachable:
            assert_never(unreachable)
