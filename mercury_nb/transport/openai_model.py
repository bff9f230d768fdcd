"""The OpenAI-compatible ChatModel: chat completions streamed over plain HTTP (no SDK)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

from pydantic import SecretStr

from mercury_nb.contract.turns.stream_bounds import ReplyLimits
from mercury_nb.transport.chunks import openai_shaped_chunks
from mercury_nb.transport.protocol import (
    ModelRequest,
    ProviderError,
    StreamChunk,
)
from mercury_nb.transport.provider_errors import (
    http_status_of,
    kind_for_exception,
    parse_retry_after,
    redact_keys,
    response_headers,
    truncate,
)
from mercury_nb.transport.request_body import BodyEncoder
from mercury_nb.transport.sse_http import http_client, post_events, tls_context
from mercury_nb.transport.stream_pump import pump

NO_KEY_NEEDED = "not-needed"
"""Sent as the bearer token to an endpoint that wants no key (some servers insist on one)."""


class OpenAIModel:
    """Streams chat completions from any OpenAI-compatible endpoint (OpenAI itself,
    OpenRouter, vLLM, llama.cpp, Ollama's ``/v1``, LM Studio) over plain HTTP
    (:mod:`~mercury_nb.transport.sse_http`), without importing the openai SDK.

    ``name`` is the configured name (what the chain, the ledger and the banners show);
    ``model`` is what the body carries. It never retries: retries and fallbacks belong to
    the agent. The finish reason is passed on exactly as received, and a stream that ends
    without one yields no :class:`FinishChunk` (interrupted), however quietly the server
    cut it. A failure before the first chunk raises
    :class:`ProviderError`; one after it propagates as raised. Every stream is bounded by
    ``limits``: a total deadline and a length cap (cut as interrupted)."""

    def __init__(
        self,
        name: str,
        model: str | None = None,
        base_url: str | None = None,
        api_key: SecretStr | str | None = None,
        timeout_s: float = 600.0,
        *,
        max_tokens_field: str = "max_tokens",
        catalog_names: tuple[str, ...] = (),
        limits: ReplyLimits | None = None,
    ) -> None:
        self.name = name
        self.model = model or name
        self.base_url = base_url
        self._api_key = api_key.get_secret_value() if isinstance(api_key, SecretStr) else api_key
        self.timeout_s = timeout_s
        self.limits = limits or ReplyLimits.default(timeout_s)
        """The total deadline and length cap of every stream (the pump enforces them)."""
        self.max_tokens_field = max_tokens_field
        self.catalog_names = catalog_names
        """Names to look the context window up under in litellm's bundled table (none for a
        custom endpoint, whose model the table cannot know)."""
        self.encoder = BodyEncoder()
        """Each message's JSON made once over the task (the body is the stored pieces)."""

    def __repr__(self) -> str:
        return f"OpenAIModel({self.name!r}, model={self.model!r}, base_url={self.base_url!r})"

    @property
    def bearer_token(self) -> str:
        """What every request sends as ``Authorization: Bearer``: the key, or
        :data:`NO_KEY_NEEDED` when the model was given none."""
        return self._api_key or NO_KEY_NEEDED

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body of this request's ``POST /chat/completions`` (the messages and tools
        as they are: serializing them is the one walk over the conversation a step makes)."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": request.messages,
            self.max_tokens_field: request.max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            body["tools"] = request.tools
            body["tool_choice"] = request.tool_choice
        return body

    def _client(self) -> Any:
        return http_client(self.base_url, self.bearer_token, self._api_key, self.timeout_s)

    @property
    def url(self) -> str:
        """Where the requests go: ``{base_url}/chat/completions`` (OpenAI's own API, or
        ``OPENAI_BASE_URL``, when no base URL was given, as the SDK would)."""
        base = self.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        return f"{base.rstrip('/')}/chat/completions"

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        return self._stream(request)

    async def _stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        client = self._client()  # the HTTP client's import is no part of the request's deadline

        async def open_stream() -> Any:
            # a body serialized here, message by message once over the task, posted as it is
            return await post_events(client, self.url,
                                     self.encoder.encode(self.request_body(request)))

        chunks = pump(self.name, open_stream, stream_chunks, self.provider_error,
                      self.limits.bounds(request.max_tokens))
        async with contextlib.aclosing(chunks):  # stopping early closes the response too
            async for chunk in chunks:
                yield chunk

    def provider_error(self, error: BaseException) -> ProviderError:
        """A :class:`ProviderError` for a failure before any output, with the key redacted
        (the pump names a failure after the response began: :func:`started_failure`)."""
        status = http_status_of(error)
        kind = kind_for_exception(error, status)
        if kind in ("connection", "timeout"):
            status = None
        message = redact_keys(error_message(error), [self._api_key])
        return ProviderError(
            provider=self.name,
            message=truncate(message) or type(error).__name__,
            status=status,
            retry_after_s=parse_retry_after(response_headers(error)),
            kind=kind,
            details={"exception": type(error).__name__},
            masked=True,  # before the cut: a key across it is masked whole
        )


DEFAULT_BASE_URL = "https://api.openai.com/v1"


def error_message(error: BaseException) -> str:
    """The provider's own words: the ``message`` of an OpenAI-style error body when there is
    one (not the ``Error code: 400 - {...}`` wrapping), else the exception's text."""
    body = getattr(error, "body", None)
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(inner, str) and inner:
            return inner
    if isinstance(body, str) and body.strip():  # a non-JSON error page
        return body.strip()
    text = getattr(error, "message", None) or str(error)
    return str(text) or type(error).__name__


def stream_chunks(stream: Any, raw: Any) -> Iterator[StreamChunk]:
    """Our chunks for one ``chat.completion.chunk`` (a parsed JSON object): text, tool-call pieces,
    the finish reason as sent, and usage (the last chunk, when ``include_usage`` was asked)."""
    return openai_shaped_chunks(raw)



def load_http_client() -> None:
    """Import the HTTP client a first request needs and load its TLS context (tens of
    milliseconds holding the GIL): a server calls this in a worker thread before it
    schedules a run, so its event loop never does."""
    tls_context()
