"""Server-sent events line by line, and the typed errors the OpenAI-compatible transport
raises (classified by provider_errors.py exactly as the openai SDK's were)."""

from __future__ import annotations

import pytest

from mercury_nb.transport.provider_errors import (
    http_status_of,
    kind_for_exception,
    parse_retry_after,
    response_headers,
)
from mercury_nb.transport.sse_http import (
    EndpointConnectionError,
    EndpointStatusError,
    EndpointTimeoutError,
    SseEvents,
    StreamedErrorEvent,
)


@pytest.mark.parametrize(
    ("lines", "events"),
    [
        pytest.param(["data: {}", ""], ["{}"], id="one-event"),
        pytest.param(["data:{}", ""], ["{}"], id="no-space"),
        pytest.param(["data: [DONE]", ""], ["[DONE]"], id="done"),
        pytest.param([": keep-alive", "", "data: 1", ""], ["1"], id="comment-keep-alive"),
        pytest.param(["data: a", "data: b", ""], ["a\nb"], id="multi-line-data"),
        pytest.param(["event: x", "id: 3", "retry: 10", ""], [], id="no-data-no-event"),
        pytest.param(["event: chunk", "data: 2", ""], ["2"], id="named-event"),
        pytest.param(["data: 1", "", "", "data: 2", ""], ["1", "2"], id="blank-lines-between"),
        pytest.param(["data: 1", "data: cut"], [], id="unfinished-at-the-end"),
        pytest.param(["data:  two spaces", ""], [" two spaces"], id="one-space-stripped"),
        pytest.param(["data", ""], [""], id="field-without-colon"),
    ],
)  # fmt: skip
def test_sse_events(lines: list[str], events: list[str]) -> None:
    parser = SseEvents()
    got = [parser.feed(line) for line in lines]
    assert [data for data in got if data is not None] == events


@pytest.mark.parametrize(
    ("error", "kind", "status", "retry_after"),
    [
        pytest.param(EndpointStatusError(429, {"message": "slow"}, {"Retry-After": "3"}),
                     "rate_limit", 429, 3.0, id="429"),
        pytest.param(EndpointStatusError(401, {"message": "key"}, {}), "auth", 401, None,
                     id="401"),
        pytest.param(EndpointStatusError(409, "conflict", {}), "client_error", 409, None,
                     id="409"),
        pytest.param(EndpointStatusError(502, "<html>", {}), "server_error", 502, None,
                     id="502-text-body"),
        pytest.param(EndpointConnectionError("Connection error."), "connection", None, None,
                     id="connection"),
        pytest.param(EndpointTimeoutError("Request timed out."), "timeout", None, None,
                     id="timeout"),
        pytest.param(StreamedErrorEvent({"message": "overloaded"}), "error", None, None,
                     id="error-inside-a-stream"),
    ],
)  # fmt: skip
def test_errors_are_classified(
    error: Exception, kind: str, status: int | None, retry_after: float | None
) -> None:
    assert http_status_of(error) == status
    assert kind_for_exception(error, status) == kind
    assert parse_retry_after(response_headers(error)) == retry_after


def test_streamed_error_message() -> None:
    assert str(StreamedErrorEvent({"message": "overloaded"})) == "overloaded"
    assert str(StreamedErrorEvent("x")) == "An error occurred during streaming"
