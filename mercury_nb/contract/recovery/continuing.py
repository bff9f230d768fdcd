"""Whether a continue may run an ending no plain continue cures: when its cause changed.

A model without tool support (``NoToolSupport``) and providers that all refused the key or
the model (a permanent ``ProviderFailure``) are cured by another model or endpoint; a window
too small for what every request carries (``WindowTooSmall``) also by another tool set or
window. :func:`cured_by` names those settings for an ending; the ledger keeps them with
their values then (:func:`cause_of`, read back by :func:`recorded_cause`). :func:`may_continue`
compares them with the settings the continue would run under, which take the cures no flag
sets from the current environment (:func:`current_fixes`). A resumable ending may always be
continued; a completion never.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, assert_never

from mercury_nb.contract.config import MercuryConfig
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
            | BudgetPause()
            | BlockedPause()
            | DeclinedPause()
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


def cause_of(ending: Ending, settings: RunSettings) -> dict[str, object]:
    """What the ledger keeps of a non-resumable ending: each setting that cures it
    (:func:`cured_by`) with the value it ended under, JSON-ready (empty: nothing to cure)."""
    return {s: (list(settings.models) if s == "models" else settings.value(s))
            for s in cured_by(ending)}


def recorded_cause(
    cause: Mapping[str, object], ran: RunSettings
) -> tuple[tuple[Setting, ...], RunSettings]:
    """The cures of a recorded ending (:func:`cause_of`) and the settings it ended under,
    ``ran`` (what the task's checkpoint says) filling what the record does not keep. A record
    that names no cause (from before causes were kept) is cured by another model or endpoint."""
    cures = tuple(s for s in SETTINGS if s in cause) or ENDPOINT
    models = cause.get("models")
    window = cause.get("context_window", ran.context_window)
    before = RunSettings(
        tuple(str(m) for m in models) if isinstance(models, list | tuple) else ran.models,
        str(cause["api_base"]) if cause.get("api_base") is not None else
        (None if "api_base" in cause else ran.api_base),
        str(cause.get("tool_set", ran.tool_set)),
        window if isinstance(window, int) else None,
    )
    return cures, before


def current_fixes(
    cures: tuple[Setting, ...], ran: RunSettings, current: RunSettings
) -> dict[str, object]:
    """The settings a continue of a non-resumable ending takes from the current settings
    rather than from the task's own: those that cure it (``cures``), have no continue flag
    (:data:`FLAGLESS`) and are now set otherwise than the task ran under."""
    return {s: current.value(s) for s in FLAGLESS
            if s in cures and current.value(s) is not None and ran.value(s) != current.value(s)}
