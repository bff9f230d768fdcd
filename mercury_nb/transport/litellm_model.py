"""The litellm ChatModel: one streamed acompletion per request, chunks mapped, errors classified."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

from pydantic import SecretStr

from mercury_nb.contract.turns.honest_finish import (
    NOT_TRACKED,
    ProviderReason,
    honest_finish_reason,
)
from mercury_nb.contract.turns.stream_bounds import ReplyLimits
from mercury_nb.transport.chunks import openai_shaped_chunks
from mercury_nb.transport.litellm_loader import load_litellm
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
from mercury_nb.transport.stream_pump import pump

NO_HTTP_STATUS_KINDS = frozenset({"interrupted", "connection", "timeout", "malformed"})
"""Kinds whose ``status_code`` litellm invents (500, 503, 408): no HTTP status was received."""

_PREFIX = re.compile(r"^(?:litellm\.\w+:\s*|\w+(?:Error|Exception):\s*)+")


class LiteLLMModel:
    """Streams chat completions through ``litellm.acompletion``.

    litellm never retries on its own here (``num_retries=0``, ``max_retries=0``): the retry
    and fallback policy belongs to the agent. litellm is imported on the first request, off
    the event loop. The stream runs through the shared
    :func:`~mercury_nb.transport.stream_pump.pump`: a failure before the first content chunk
    raises :class:`ProviderError`; one after it propagates as raised, and the stream counts
    as interrupted. The finish reason passed on is :func:`honest_finish_reason`'s. Every
    stream is bounded by ``limits``: a total deadline and a length cap (cut as interrupted).
    """

    def __init__(
        self,
        name: str,
        api_base: str | None = None,
        api_key: SecretStr | str | None = None,
        timeout_s: float = 600.0,
        limits: ReplyLimits | None = None,
    ) -> None:
        self.name = name
        self.api_base = api_base
        self._api_key = api_key.get_secret_value() if isinstance(api_key, SecretStr) else api_key
        self.timeout_s = timeout_s
        self.limits = limits or ReplyLimits.default(timeout_s)
        """The total deadline and length cap of every stream (the pump enforces them)."""
        self.encoder = BodyEncoder()
        """Each message's JSON made once over the task; litellm gets fresh copies parsed
        from it (see :meth:`completion_kwargs`)."""

    def __repr__(self) -> str:
        return f"LiteLLMModel({self.name!r}, api_base={self.api_base!r})"

    def completion_kwargs(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments given to ``litellm.acompletion`` for this request."""
        # litellm may edit messages in place, so it gets its own copies, as JSON parsed back:
        # each message is serialized once over the task and the copy is made by the C parser
        # (a deep copy per request walked the whole conversation in Python on every step)
        sent = {"messages": list(request.messages), "tools": list(request.tools)}
        copies = json.loads(self.encoder.encode(sent))
        kwargs: dict[str, Any] = {
            "model": self.name,
            "messages": copies["messages"],
            "max_tokens": request.max_tokens,
            "stream": True,
            "timeout": self.timeout_s,
            "num_retries": 0,
            "max_retries": 0,
        }
        if request.tools:
            kwargs["tools"] = copies["tools"]
            kwargs["tool_choice"] = request.tool_choice
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self._api_key:
            kwargs["api_key"] = self._api_key
        return kwargs

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        return self._stream(request)

    async def _stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        litellm = await load_litellm()  # a failed import is no provider failure: it propagates
        kwargs = self.completion_kwargs(request)
        if asks_usage(litellm, self.name):
            kwargs["stream_options"] = {"include_usage": True}

        async def open_stream() -> Any:
            return await litellm.acompletion(**kwargs)

        chunks = pump(self.name, open_stream, _chunks_of, self.provider_error,
                      self.limits.bounds(request.max_tokens))
        async with contextlib.aclosing(chunks):  # stopping early closes litellm's stream too
            async for chunk in chunks:
                yield chunk

    def provider_error(self, error: BaseException) -> ProviderError:
        """A :class:`ProviderError` for a failure before any output, with the key redacted."""
        raw_status = http_status_of(error)
        kind = kind_for_exception(error, raw_status)
        status = None if kind in NO_HTTP_STATUS_KINDS else raw_status
        message = getattr(error, "message", None) or str(error) or type(error).__name__
        message = (_PREFIX.sub("", redact_keys(str(message), [self._api_key]))
                   or type(error).__name__)
        return ProviderError(
            provider=self.name,
            message=truncate(message),
            status=status,
            retry_after_s=parse_retry_after(response_headers(error)),
            kind=kind,
            details={"exception": type(error).__name__},
            masked=True,  # before the cut: a key across it is masked whole
        )


def provider_finish_reason(response: Any) -> ProviderReason:
    """The finish reason the provider itself sent so far, as litellm's stream wrapper recorded
    it (None: none yet), or :data:`NOT_TRACKED` when the stream does not record it."""
    if not hasattr(response, "received_finish_reason"):
        return NOT_TRACKED
    received = getattr(response, "received_finish_reason", None)
    found = received or getattr(response, "intermittent_finish_reason", None) or None
    return None if found is None else str(found)


def stream_chunks(
    raw: Any, provider_reason: ProviderReason = NOT_TRACKED
) -> Iterator[StreamChunk]:
    """Our chunks for one litellm streaming chunk: text, tool-call pieces, finish, usage.

    A chunk without a finish reason yields no :class:`FinishChunk`; one with a finish reason
    yields it as received (see :func:`honest_finish_reason`)."""
    return openai_shaped_chunks(
        raw, lambda reason: honest_finish_reason(reason, provider_reason)
    )


def asks_usage(litellm: Any, name: str) -> bool:
    """Whether litellm says the model's provider takes ``stream_options`` (token usage in
    the stream); asking one that does not would be refused."""
    try:
        supported = litellm.get_supported_openai_params(model=name) or ()
    except Exception:
        return False
    return "stream_options" in supported


def _chunks_of(stream: Any, raw: Any) -> Iterator[StreamChunk]:
    return stream_chunks(raw, provider_finish_reason(stream))
