"""Table tests for classifying provider stream endings."""

import pytest

from mercury_nb.contract.turns.stream_ending import (
    StreamEnding,
    classify_finish_reason,
    classify_stream,
)


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        pytest.param("stop", StreamEnding.COMPLETE, id="stop"),
        pytest.param("tool_calls", StreamEnding.COMPLETE, id="tool_calls"),
        pytest.param("tool-calls", StreamEnding.COMPLETE, id="tool-calls-hyphenated"),
        pytest.param("content_filter", StreamEnding.COMPLETE, id="content_filter"),
        pytest.param("content-filter", StreamEnding.COMPLETE, id="content-filter-hyphenated"),
        pytest.param("STOP", StreamEnding.COMPLETE, id="case-insensitive"),
        pytest.param("length", StreamEnding.TRUNCATED, id="length"),
        pytest.param(None, StreamEnding.INTERRUPTED, id="missing"),
        pytest.param("", StreamEnding.INTERRUPTED, id="empty"),
        pytest.param("error", StreamEnding.INTERRUPTED, id="error"),
        pytest.param("other", StreamEnding.INTERRUPTED, id="other"),
        pytest.param("unknown", StreamEnding.INTERRUPTED, id="unknown"),
        pytest.param("end_turn_weird", StreamEnding.INTERRUPTED, id="anything-else"),
    ],
)
def test_finish_reason_table(reason: str | None, expected: StreamEnding) -> None:
    assert classify_finish_reason(reason) is expected


@pytest.mark.parametrize(
    "reason",
    [pytest.param("stop", id="after-stop"), pytest.param("length", id="after-length"),
     pytest.param(None, id="no-reason")],
)
def test_an_exception_mid_stream_is_interrupted(reason: str | None) -> None:
    assert classify_stream(reason, ConnectionError("dropped")) is StreamEnding.INTERRUPTED


def test_no_exception_passes_reason_through() -> None:
    assert classify_stream("stop", None) is StreamEnding.COMPLETE
