"""Whether a continue may run a task whose ending no plain continue cures: only when the
settings that caused that ending changed.

A model without tool support (``NoToolSupport``) and providers that all refused the key or
the model (a permanent ``ProviderFailure``) are cured by another model or endpoint; a window
too small for what every request carries (``WindowTooSmall``) also by another tool set or
window. :func:`cured_by` names those settings for an ending (the ledger keeps them with the
task); :func:`may_continue` compares the settings the task ran under with those the continue
would run it under, which take the cures no flag sets from the current environment
(:func:`current_fixes`). A resumable ending may always be continued; a completion never.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, assert_never

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import (
    Aborted,
    BlockedPause,
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

Setting = Literal["models", "api_base", "tool_set", "context_window"]
"""A setting whose change can cure an ending (``models``: the model and its fallbacks)."""

SETTINGS: tuple[Setting, ...] = ("models", "api_base", "tool_set", "context_window")
ENDPOINT: tuple[Setting, ...] = ("models", "api_base")
"""What cures a model without tools or a provider that refused: another model or endpoint."""
WINDOW: tuple[Setting, ...] = ("models", "api_base", "tool_set", "context_window")
"""What cures a window too small for the tools: another model, endpoint, tool set or window."""
FLAGLESS: tuple[Setting, ...] = ("tool_set", "context_window")
"""Cures no continue flag sets: a continue takes them from the current settings (the
``MERCURY_TOOL_SET`` / ``MERCURY_CONTEXT_WINDOW`` a banner names), see :func:`current_fixes`."""


@dataclass(frozen=True)
class RunSettings:
    """The settings of a run that decide whether a model can take its requests at all."""

    models: tuple[str, ...]
    api_base: str | None = None
    tool_set: str = "full"
    context_window: int | None = None

    @classmethod
    def of(cls, config: MercuryConfig) -> RunSettings:
        return cls(config.model_chain, config.api_base, config.tool_set, config.context_window)

    def value(self, setting: Setting) -> object:
        match setting:
            case "models":
                return self.models
            case "api_base":
                return self.api_base
            case "tool_set":
                return self.tool_set
            case "context_window":
                return self.context_window
            case _ as unreachable:
                assert_never(unreachable)


def cured_by(ending: Ending) -> tuple[Setting, ...]:
    """The settings whose change lets a continue of ``ending`` succeed when a plain continue
    cannot (empty: a resumable ending, or a completion, which nothing continues)."""
    match ending:
        case NoToolSupport():
            return ENDPOINT
        case ProviderFailure(permanent=True):
            return ENDPOINT
        case WindowTooSmall():
            return WINDOW
        case (
            VerifiedCompletion()
            | NoChangesCompletion()
            | StepBudgetPause()
            | WorkNotStartedPause()
            | VerificationFailedPause()
            | FilesMissingPause()
            | TruncationPause()
            | Paused()
            | BlockedPause()
            | QuestionPause()
            | ProviderFailure()
            | Failed()
            | Aborted()
        ):
            return ()
        case _ as unreachable:
            assert_never(unreachable)


def changed_settings(before: RunSettings, after: RunSettings) -> frozenset[Setting]:
    """The settings that differ between the run that ended and the continue."""
    return frozenset(s for s in SETTINGS if before.value(s) != after.value(s))


def may_continue(
    resumable: bool, cures: tuple[Setting, ...], before: RunSettings, after: RunSettings
) -> bool:
    """A continue may run: the ending is resumable, or one of the settings that cure it
    (``cures``, from :func:`cured_by`) differs between ``before`` (what the task ran
    under) and ``after`` (what the continue runs it under). ``--model`` naming the same
    model changes nothing."""
    if resumable:
        return True
    return bool(changed_settings(before, after) & frozenset(cures))


def cures_of(names: Iterable[str]) -> tuple[Setting, ...]:
    """The known settings among ``names`` (as the ledger keeps them), in :data:`SETTINGS` order."""
    given = set(names)
    return tuple(s for s in SETTINGS if s in given)


def current_fixes(
    cures: tuple[Setting, ...], ran: RunSettings, current: RunSettings
) -> dict[str, object]:
    """The settings a continue of a non-resumable ending takes from the current settings
    rather than from the task's own: those that cure it (``cures``), have no continue flag
    (:data:`FLAGLESS`) and are now set otherwise than the task ran under."""
    return {s: current.value(s) for s in FLAGLESS
            if s in cures and current.value(s) is not None and ran.value(s) != current.value(s)}
