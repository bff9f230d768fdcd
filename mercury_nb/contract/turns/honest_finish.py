"""Which finish reason a stream passes on when litellm may have papered over the provider's."""

from __future__ import annotations

from enum import Enum
from typing import Final, Literal

from mercury_nb.contract.turns.stream_ending import normalise_reason

GENUINE_PROVIDER_ENDINGS = frozenset(
    {
        "stop", "end_turn", "stop_sequence", "complete", "eos", "eos_token",
        "tool_calls", "tool_use", "tool_call", "function_call",
        "length", "max_tokens",
        "content_filter", "refusal", "safety", "recitation", "blocklist", "prohibited_content",
        "spii", "language", "error_toxic", "sensitive", "guardrail_intervened",
        "image_safety", "image_prohibited_content", "image_recitation",
    }
)  # fmt: skip
"""Provider finish reasons (normalised) whose litellm mapping can be trusted. litellm maps
every other one, known errors included (``other``, ``network_error``, ``ERROR``,
``MALFORMED_FUNCTION_CALL``, ``FINISH_REASON_UNSPECIFIED``...), to ``stop``."""


class Tracking(Enum):
    """What a stream knows of the provider's own finish reason beyond the reported one."""

    NOT_TRACKED = "not-tracked"


NOT_TRACKED: Final = Tracking.NOT_TRACKED
"""The provider's finish reason when the stream object does not track it at all."""

ProviderReason = str | None | Literal[Tracking.NOT_TRACKED]
"""The finish reason the provider itself sent so far (None: none), or :data:`NOT_TRACKED`."""


def honest_finish_reason(reported: str, provider_reason: ProviderReason) -> str | None:
    """The finish reason to pass on: the reported one, unless it papered over the provider's.

    ``length`` is kept (truncation is never mistaken for success). When the provider sent no
    finish reason at all (``provider_reason`` None or empty), None is passed on whatever was
    reported — litellm invents ``stop`` for a 200 stream that ended with no chunk and no
    finish reason — so the stream classifies as interrupted. When the provider's own reason
    is known and not a genuine ending, it is passed on as received, so it classifies as
    interrupted instead of a fake ``stop``. :data:`NOT_TRACKED`: the reported one is trusted."""
    if reported == "length" or provider_reason is NOT_TRACKED:
        return reported
    if provider_reason is None or not provider_reason.strip():
        return None
    if normalise_reason(provider_reason) in GENUINE_PROVIDER_ENDINGS:
        return reported
    return provider_reason
