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

EndingStatus = Literal["completed", "paused", "failed", "aborted"]


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
class ProviderAttempt:
    """One provider of the chain and the first error it gave."""

    name: str
    reason: str


@dataclass(frozen=True)
class ProviderFailure:
    """Every provider of the chain failed."""

    last_error: str
    providers: tuple[ProviderAttempt, ...] = ()


@dataclass(frozen=True)
class Failed:
    """The task could not go on for a reason that is not a provider's."""

    reason: str


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
    | ProviderFailure
    | Failed
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
        ):
            return "paused"
        case ProviderFailure() | Failed():
            return "failed"
        case Aborted():
            return "aborted"
        case _ as unreachable:
            assert_never(unreachable)
