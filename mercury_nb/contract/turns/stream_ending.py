"""Classifies how one provider stream ended: complete, truncated or interrupted."""

from __future__ import annotations

from enum import StrEnum

COMPLETE_REASONS = frozenset({"stop", "tool_calls", "content_filter", "function_call"})
"""Finish reasons that mean the provider finished its reply on purpose.

litellm maps Anthropic's ``tool_use`` to ``tool_calls`` and ``end_turn`` to ``stop``;
the hyphenated spellings of other SDKs are normalised before lookup."""

TRUNCATED_REASONS = frozenset({"length", "max_tokens"})
"""Finish reasons that mean the reply hit the output-token limit."""


class StreamEnding(StrEnum):
    """Why a provider stream stopped."""

    COMPLETE = "complete"
    TRUNCATED = "truncated"
    INTERRUPTED = "interrupted"


def normalise_reason(reason: str) -> str:
    """A finish reason as looked up: trimmed, lower case, hyphens as underscores."""
    return reason.strip().lower().replace("-", "_")


def classify_finish_reason(reason: str | None) -> StreamEnding:
    """Map a finish reason to a stream ending.

    A missing finish reason is never success: ``None``, ``""``, ``error``, ``other``,
    ``unknown`` and anything unrecognised are interruptions.
    """
    if reason is None:
        return StreamEnding.INTERRUPTED
    key = normalise_reason(reason)
    if key in COMPLETE_REASONS:
        return StreamEnding.COMPLETE
    if key in TRUNCATED_REASONS:
        return StreamEnding.TRUNCATED
    return StreamEnding.INTERRUPTED


def classify_stream(finish_reason: str | None, error: BaseException | None) -> StreamEnding:
    """A stream that raised (mid-stream fallback error, dropped connection, malformed
    chunk) is interrupted whatever finish reason it may have sent before."""
    if error is not None:
        return StreamEnding.INTERRUPTED
    return classify_finish_reason(finish_reason)
