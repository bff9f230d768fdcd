"""Provider failure classification: kinds, statuses, Retry-After parsing and key redaction."""

from __future__ import annotations

import email.utils

import httpx
import pytest

from mercury_nb.transport.provider_errors import (
    http_status_of,
    kind_for_exception,
    kind_for_status,
    parse_retry_after,
    redact_keys,
    response_headers,
    truncate,
)


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        pytest.param(429, "rate_limit", id="429"),
        pytest.param(401, "auth", id="401"),
        pytest.param(403, "permission", id="403"),
        pytest.param(404, "not_found", id="404"),
        pytest.param(400, "bad_request", id="400"),
        pytest.param(422, "bad_request", id="422"),
        pytest.param(408, "timeout", id="408"),
        pytest.param(409, "client_error", id="409"),
        pytest.param(500, "server_error", id="500"),
        pytest.param(503, "server_error", id="503"),
        pytest.param(None, "error", id="none"),
    ],
)
def test_kind_for_status(status: int | None, kind: str) -> None:
    assert kind_for_status(status) == kind


class RateLimitError(Exception):
    status_code = 429


class MidStreamFallbackError(RateLimitError):
    """Named like litellm's: the most specific class name wins."""


class Unnamed(Exception):
    status_code = 503


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        pytest.param(RateLimitError(), "rate_limit", id="by-class-name"),
        pytest.param(MidStreamFallbackError(), "interrupted", id="most-specific-class-wins"),
        pytest.param(Unnamed(), "server_error", id="falls-back-to-status"),
        pytest.param(ConnectionResetError(), "connection", id="builtin-connection-error"),
        pytest.param(httpx.ReadTimeout("slow"), "timeout", id="httpx-timeout"),
    ],
)
def test_kind_for_exception(error: Exception, kind: str) -> None:
    assert kind_for_exception(error, http_status_of(error)) == kind


def test_status_from_the_response_when_the_error_has_none() -> None:
    error = Exception()
    error.response = httpx.Response(502)  # type: ignore[attr-defined]
    assert http_status_of(error) == 502
    assert http_status_of(ValueError()) is None


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        pytest.param({"Retry-After": "2"}, 2.0, id="seconds"),
        pytest.param({"retry-after": "0.25"}, 0.25, id="fraction"),
        pytest.param({"retry-after-ms": "1500", "retry-after": "9"}, 1.5, id="ms-wins"),
        pytest.param({"retry-after": "-3"}, 0.0, id="negative-clamped"),
        pytest.param({"retry-after": "soon"}, None, id="garbage"),
        pytest.param({}, None, id="absent"),
        pytest.param(None, None, id="no-headers"),
    ],
)
def test_parse_retry_after(headers: dict[str, str] | None, seconds: float | None) -> None:
    assert parse_retry_after(headers) == seconds


def test_parse_retry_after_http_date_uses_the_given_clock() -> None:
    now = 1_700_000_000.0
    header = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after({"Retry-After": header}, now=now) == 30.0


def test_response_headers_are_merged_lowercase() -> None:
    error = Exception()
    error.response = httpx.Response(429, headers={"Retry-After": "4"})  # type: ignore[attr-defined]
    error.litellm_response_headers = {"X-Other": "1"}  # type: ignore[attr-defined]
    assert response_headers(error) == {"retry-after": "4", "x-other": "1"}


def test_redact_and_truncate() -> None:
    assert redact_keys("key sk-abc123 rejected", ["sk-abc123", None, ""]) == "key *** rejected"
    assert redact_keys("short ab", ["ab"]) == "short ab"  # too short to be a key
    assert truncate("a  b\n c") == "a b c"
    assert truncate("x" * 50, limit=10) == "x" * 9 + "…"
