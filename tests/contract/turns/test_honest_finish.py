"""The finish reason a stream passes on: the reported one, unless it hid the provider's."""

from __future__ import annotations

import pytest

from mercury_nb.contract.turns.honest_finish import (
    NOT_TRACKED,
    ProviderReason,
    honest_finish_reason,
)
from mercury_nb.contract.turns.stream_ending import StreamEnding, classify_finish_reason


@pytest.mark.parametrize(
    ("reported", "provider", "passed_on"),
    [
        pytest.param("stop", "stop", "stop", id="openai-stop"),
        pytest.param("stop", "end_turn", "stop", id="anthropic-end-turn"),
        pytest.param("tool_calls", "tool_use", "tool_calls", id="anthropic-tool-use"),
        pytest.param("stop", "STOP", "stop", id="gemini-stop"),
        pytest.param("stop", " Stop-Sequence ", "stop", id="normalised-before-lookup"),
        pytest.param("stop", "other", "other", id="unknown-mapped-to-stop"),
        pytest.param("stop", "ERROR", "ERROR", id="cohere-error"),
        pytest.param("stop", "MALFORMED_FUNCTION_CALL", "MALFORMED_FUNCTION_CALL",
                     id="gemini-malformed-call"),
        pytest.param("tool_calls", "network_error", "network_error",
                     id="error-normalised-to-tool-calls"),
        pytest.param("content_filter", "OTHER", "OTHER", id="gemini-other"),
        pytest.param("length", "pause_turn", "length", id="length-kept"),
        pytest.param("stop", None, None, id="provider-sent-none-litellm-invented-stop"),
        pytest.param("tool_calls", "", None, id="provider-sent-empty"),
        pytest.param("stop", "   ", None, id="provider-sent-blank"),
        pytest.param("stop", NOT_TRACKED, "stop", id="not-tracked-trusted"),
        pytest.param("length", None, "length", id="length-kept-without-provider-reason"),
    ],
)  # fmt: skip
def test_honest_finish_reason(
    reported: str, provider: ProviderReason, passed_on: str | None
) -> None:
    assert honest_finish_reason(reported, provider) == passed_on


@pytest.mark.parametrize(
    ("reported", "provider", "ending"),
    [
        pytest.param("stop", "other", StreamEnding.INTERRUPTED, id="papered-stop-interrupted"),
        pytest.param("stop", None, StreamEnding.INTERRUPTED, id="invented-stop-interrupted"),
        pytest.param("stop", "end_turn", StreamEnding.COMPLETE, id="genuine-stop-complete"),
        pytest.param("length", "other", StreamEnding.TRUNCATED, id="length-truncated"),
    ],
)  # fmt: skip
def test_what_the_core_then_classifies(
    reported: str, provider: ProviderReason, ending: StreamEnding
) -> None:
    assert classify_finish_reason(honest_finish_reason(reported, provider)) is ending
