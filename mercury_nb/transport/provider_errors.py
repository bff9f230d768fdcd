"""Turns provider failures into ProviderError fields: kind, status, Retry-After, redaction."""

from __future__ import annotations

import email.utils
import os
import time
from collections.abc import Iterable, Mapping
from typing import Any

from mercury_nb.contract.redaction import env_secrets
from mercury_nb.contract.redaction import redact as contract_redact
from mercury_nb.contract.text_cut import clip

MESSAGE_CHARS = 2000
"""Longest provider message kept in a ProviderError (the banner shows up to
``provider_message_chars`` of it, the ledger ``provider_error_chars``)."""


_KIND_BY_CLASS_NAME: dict[str, str] = {
    # most specific names first: the first class in the MRO that is listed wins
    "MidStreamFallbackError": "interrupted",
    "ContextWindowExceededError": "context_window",
    "ContentPolicyViolationError": "content_policy",
    "RateLimitError": "rate_limit",
    "AuthenticationError": "auth",
    "PermissionDeniedError": "permission",
    "NotFoundError": "not_found",
    "UnprocessableEntityError": "bad_request",
    "BadRequestError": "bad_request",
    "Timeout": "timeout",
    "APITimeoutError": "timeout",
    "TimeoutException": "timeout",
    "TimeoutError": "timeout",
    "ServiceUnavailableError": "server_error",
    "InternalServerError": "server_error",
    "BadGatewayError": "server_error",
    "APIConnectionError": "connection",
    "ConnectError": "connection",
    "RemoteProtocolError": "connection",
    "ReadError": "connection",
    "ConnectionError": "connection",
    "JSONDecodeError": "malformed",
}


def kind_for_status(status: int | None) -> str:
    """A short name for an HTTP status, used when the exception class says nothing better."""
    if status is None:
        return "error"
    if status == 429:
        return "rate_limit"
    if status == 401:
        return "auth"
    if status == 403:
        return "permission"
    if status == 404:
        return "not_found"
    if status == 408:
        return "timeout"
    if status in (400, 413, 422):
        return "bad_request"
    if status >= 500:
        return "server_error"
    if status >= 400:
        return "client_error"
    return "error"


def kind_for_exception(error: BaseException, status: int | None) -> str:
    """The kind of a failure, from its class (by name, so litellm need not be imported)."""
    for cls in type(error).__mro__:
        kind = _KIND_BY_CLASS_NAME.get(cls.__name__)
        if kind is not None:
            return kind
    return kind_for_status(status)


def http_status_of(error: BaseException) -> int | None:
    """The HTTP status an exception carries (``status_code`` or its response's status)."""
    for candidate in (
        getattr(error, "status_code", None),
        getattr(getattr(error, "response", None), "status_code", None),
    ):
        if isinstance(candidate, int) and 100 <= candidate <= 599:
            return candidate
    return None


def parse_retry_after(headers: Mapping[str, Any] | None, now: float | None = None) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    if not headers:
        return None
    lowered = {str(k).lower(): v for k, v in headers.items()}
    raw_ms = lowered.get("retry-after-ms")
    if raw_ms is not None:
        try:
            return max(float(raw_ms) / 1000.0, 0.0)
        except (TypeError, ValueError):
            pass
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    try:
        return max(float(raw), 0.0)
    except (TypeError, ValueError):
        pass
    try:
        when = email.utils.parsedate_to_datetime(str(raw))
    except (TypeError, ValueError, IndexError):
        return None
    current = time.time() if now is None else now
    return max(when.timestamp() - current, 0.0)


def response_headers(error: BaseException) -> dict[str, Any]:
    """Every response header an exception exposes (litellm keeps them in several places)."""
    found: dict[str, Any] = {}
    for source in (
        getattr(getattr(error, "response", None), "headers", None),
        getattr(error, "litellm_response_headers", None),
        getattr(error, "headers", None),
    ):
        if source is None:
            continue
        try:
            for key, value in dict(source).items():
                found.setdefault(str(key).lower(), value)
        except (TypeError, ValueError):
            continue
    return found


def redact_keys(text: str, secrets: Iterable[str | None],
                environ: Mapping[str, str] | None = None) -> str:
    """``text`` with every given secret (of at least 4 characters), every secret of the
    environment (``environ``, default ``os.environ``) and every key-looking token masked:
    the one mask of :func:`mercury_nb.contract.redaction.redact`, with every secret the
    task knows (the model's key and the env's), so nothing later masks it again."""
    given = [secret for secret in secrets if secret and len(secret) >= 4]
    return contract_redact(text, [*given, *env_secrets(os.environ if environ is None else environ)])


def truncate(text: str, limit: int = MESSAGE_CHARS) -> str:
    return clip(" ".join(text.split()), limit)  # a key across the cut is masked whole
