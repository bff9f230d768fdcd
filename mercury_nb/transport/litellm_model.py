"""The litellm ChatModel: one streamed acompletion per request, chunks mapped, errors classified."""

from __future__ import annotations

import contextlib
import copy
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

from pydantic import SecretStr

from mercury_nb.transport.chunks import openai_shaped_chunks
from mercury_nb.transport.litellm_loader import load_litellm
from mercury_nb.transport.protocol import (
    ModelRequest,
    ProviderError,
    StreamChunk,
)
from mercury_nb.transport.provider_errors import (
    kind_for_exception,
    parse_retry_after,
    redact,
    response_headers,
    status_of,
    truncate,
)

NO_HTTP_STATUS_KINDS = frozenset({"interrupted", "connection", "timeout", "malformed"})
"""Kinds whose ``status_code`` litellm invents (500, 503, 408): no HTTP status was received."""

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

NOT_TRACKED = object()
"""The provider's finish reason when the stream object does not track it at all."""

_PREFIX = re.compile(r"^(?:litellm\.\w+:\s*|\w+(?:Error|Exception):\s*)+")


class LiteLLMModel:
    """Streams chat completions through ``litellm.acompletion``.

    litellm never retries on its own here (``num_retries=0``, ``max_retries=0``): the retry
    and fallback policy belongs to the agent. litellm is imported on the first request, off
    the event loop. A failure before the first chunk raises :class:`ProviderError`; a failure
    after it propagates as raised, and the stream counts as interrupted.
    """

    def __init__(
        self,
        name: str,
        api_base: str | None = None,
        api_key: SecretStr | str | None = None,
        timeout_s: float = 600.0,
    ) -> None:
        self.name = name
        self.api_base = api_base
        self._api_key = api_key.get_secret_value() if isinstance(api_key, SecretStr) else api_key
        self.timeout_s = timeout_s

    def __repr__(self) -> str:
        return f"LiteLLMModel({self.name!r}, api_base={self.api_base!r})"

    def completion_kwargs(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments given to ``litellm.acompletion`` for this request."""
        kwargs: dict[str, Any] = {
            "model": self.name,
            # litellm may edit messages in place; the loop's list must stay as it was sent
            "messages": copy.deepcopy(list(request.messages)),
            "max_tokens": request.max_tokens,
            "stream": True,
            "timeout": self.timeout_s,
            "num_retries": 0,
            "max_retries": 0,
        }
        if request.tools:
            kwargs["tools"] = copy.deepcopy(list(request.tools))
            kwargs["tool_choice"] = request.tool_choice
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self._api_key:
            kwargs["api_key"] = self._api_key
        return kwargs

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        return self._stream(request)

    async def _stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        litellm = await load_litellm()
        kwargs = self.completion_kwargs(request)
        if asks_usage(litellm, self.name):
            kwargs["stream_options"] = {"include_usage": True}
        try:
            response = await litellm.acompletion(**kwargs)
        except Exception as error:
            raise self.provider_error(error) from None
        chunks = response.__aiter__()
        emitted = False
        finished = False
        try:
            while True:
                try:
                    raw = await chunks.__anext__()
                except StopAsyncIteration:
                    finished = True
                    break
                except Exception as error:
                    if not emitted:
                        raise self.provider_error(error) from None
                    raise
                for chunk in stream_chunks(raw, provider_finish_reason(response)):
                    emitted = True
                    yield chunk
        finally:
            if not finished:
                await _close(response)

    def provider_error(self, error: BaseException) -> ProviderError:
        """A :class:`ProviderError` for a failure before any output, with the key redacted."""
        raw_status = status_of(error)
        kind = kind_for_exception(error, raw_status)
        status = None if kind in NO_HTTP_STATUS_KINDS else raw_status
        message = getattr(error, "message", None) or str(error) or type(error).__name__
        message = _PREFIX.sub("", redact(str(message), [self._api_key])) or type(error).__name__
        return ProviderError(
            provider=self.name,
            message=truncate(message),
            status=status,
            retry_after_s=parse_retry_after(response_headers(error)),
            kind=kind,
            details={"exception": type(error).__name__},
        )


def provider_finish_reason(response: Any) -> object:
    """The finish reason the provider itself sent so far, as litellm's stream wrapper recorded
    it (None: none yet), or :data:`NOT_TRACKED` when the stream does not record it."""
    if not hasattr(response, "received_finish_reason"):
        return NOT_TRACKED
    received = getattr(response, "received_finish_reason", None)
    return received or getattr(response, "intermittent_finish_reason", None) or None


def honest_finish_reason(reported: str, provider_reason: object) -> str | None:
    """The finish reason to pass on: litellm's, unless litellm papered over the provider's.

    ``length`` is kept (truncation is never mistaken for success). When the provider sent no
    finish reason at all (``provider_reason`` None or empty), None is passed on whatever
    litellm filled in — litellm invents ``stop`` for a 200 stream that ended with no chunk
    and no finish reason — so the stream classifies as interrupted. When the provider's own
    reason is known and not a genuine ending, it is passed on as received, so it classifies
    as interrupted instead of a fake ``stop``. :data:`NOT_TRACKED`: litellm's is trusted."""
    if reported == "length" or provider_reason is NOT_TRACKED:
        return reported
    if not isinstance(provider_reason, str) or not provider_reason.strip():
        return None
    if provider_reason.strip().lower().replace("-", "_") in GENUINE_PROVIDER_ENDINGS:
        return reported
    return provider_reason


def stream_chunks(raw: Any, provider_reason: object = NOT_TRACKED) -> Iterator[StreamChunk]:
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


async def _close(response: Any) -> None:
    """Close litellm's stream (and its HTTP connection) when we stop reading early."""
    aclose = getattr(response, "aclose", None)
    if aclose is None:
        return
    with contextlib.suppress(Exception):  # a broken stream may fail to close; its error matters
        await aclose()
