"""The one stream pump, played through both transports by in-process fake SDK streams.

Each row is a raw stream (chunks, then maybe an exception) handed to the OpenAI-compatible
model (a fake POST) and to the litellm model (a fake ``litellm`` module); both
must yield the same chunks and fail the same way. The row that once split them: a usage-only
chunk followed by an error, which is a failure before any output on both.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from types import SimpleNamespace
from typing import Any

import pytest

from mercury_nb.contract.turns.stream_ending import StreamEnding
from mercury_nb.testing import collect_stream
from mercury_nb.transport import litellm_model, openai_model
from mercury_nb.transport.litellm_model import LiteLLMModel
from mercury_nb.transport.openai_model import OpenAIModel
from mercury_nb.transport.protocol import (
    ChatModel,
    FinishChunk,
    ModelRequest,
    ProviderError,
    TextChunk,
    UsageChunk,
)
from mercury_nb.transport.stream_pump import EMPTY_STREAM, started_failure

REQUEST = ModelRequest(messages=({"role": "user", "content": "hi"},))


class APIConnectionError(Exception):
    """Named like the SDKs' connection failure (the kind is read from the class name)."""


class APITimeoutError(Exception):
    """Named like the SDKs' timeout."""


class RateLimitError(Exception):
    """Named like the SDKs' 429, with its status."""

    status_code = 429


def text(piece: str) -> Any:
    return SimpleNamespace(choices=[SimpleNamespace(
        delta=SimpleNamespace(content=piece, tool_calls=None), finish_reason=None)], usage=None)


def finish(reason: str) -> Any:
    return SimpleNamespace(choices=[SimpleNamespace(
        delta=SimpleNamespace(content=None, tool_calls=None), finish_reason=reason)], usage=None)


def usage(prompt: int = 7, completion: int = 2) -> Any:
    return SimpleNamespace(
        choices=[], usage=SimpleNamespace(prompt_tokens=prompt, completion_tokens=completion))


class FakeStream:
    """An SDK stream: yields its items, raising any that is an exception; counts closes."""

    def __init__(self, items: tuple[Any, ...]) -> None:
        self.items = items
        self.closed = 0

    async def __aiter__(self) -> AsyncIterator[Any]:
        for item in self.items:
            if isinstance(item, BaseException):
                raise item
            yield item

    async def aclose(self) -> None:
        self.closed += 1


Opened = list[FakeStream]


def _openai(monkeypatch: pytest.MonkeyPatch, items: tuple[Any, ...], opened: Opened,
            refuse: BaseException | None) -> ChatModel:
    async def post_events(client: Any, url: str, body: bytes) -> FakeStream:  # the POST
        assert url == "http://127.0.0.1:9/v1/chat/completions" and b'"stream":true' in body
        if refuse is not None:
            raise refuse
        opened.append(FakeStream(items))
        return opened[-1]

    monkeypatch.setattr(openai_model.OpenAIModel, "_client", lambda self: None)
    monkeypatch.setattr(openai_model, "post_events", post_events)
    return OpenAIModel("fake/m", "m", "http://127.0.0.1:9/v1", "sk-x")


def _litellm(monkeypatch: pytest.MonkeyPatch, items: tuple[Any, ...], opened: Opened,
             refuse: BaseException | None) -> ChatModel:
    async def acompletion(**kwargs: Any) -> FakeStream:
        if refuse is not None:
            raise refuse
        opened.append(FakeStream(items))
        return opened[-1]

    fake = SimpleNamespace(acompletion=acompletion,
                           get_supported_openai_params=lambda model: ["stream_options"])

    async def load() -> Any:
        return fake

    monkeypatch.setattr(litellm_model, "load_litellm", load)
    return LiteLLMModel("fake/m", "http://127.0.0.1:9/v1", "sk-x")


Make = Callable[[pytest.MonkeyPatch, tuple[Any, ...], Opened, BaseException | None], ChatModel]
TRANSPORTS = [pytest.param(_openai, id="openai-sdk"), pytest.param(_litellm, id="litellm")]

# items, then: chunks yielded, the error's (type, kind, status) or None, the ending, closed
ROWS = [
    pytest.param((text("Hi"), finish("stop"), usage()),
                 (TextChunk("Hi"), FinishChunk("stop"), UsageChunk(7, 2)), None,
                 StreamEnding.COMPLETE, 0, id="text-finish-usage"),
    pytest.param((text("cut"), finish("length")), (TextChunk("cut"), FinishChunk("length")),
                 None, StreamEnding.TRUNCATED, 0, id="length"),
    pytest.param((text("half"),), (TextChunk("half"),), None, StreamEnding.INTERRUPTED, 0,
                 id="text-then-end-without-finish"),
    pytest.param((usage(), APIConnectionError("reset")), (UsageChunk(7, 2),),
                 (ProviderError, "interrupted", None), StreamEnding.INTERRUPTED, 1,
                 id="usage-only-then-error"),
    pytest.param((usage(), RateLimitError("slow down")), (UsageChunk(7, 2),),
                 (ProviderError, "rate_limit", None), StreamEnding.INTERRUPTED, 1,
                 id="usage-only-then-provider-kind"),
    pytest.param((usage(),), (UsageChunk(7, 2),), (ProviderError, "interrupted", None),
                 StreamEnding.INTERRUPTED, 0, id="usage-only-then-end"),
    pytest.param((), (), (ProviderError, "interrupted", None), StreamEnding.INTERRUPTED, 0,
                 id="empty"),
    pytest.param((APIConnectionError("reset"),), (), (ProviderError, "interrupted", None),
                 StreamEnding.INTERRUPTED, 1, id="error-first"),
    pytest.param((APITimeoutError("slow"),), (), (ProviderError, "timeout", None),
                 StreamEnding.INTERRUPTED, 1, id="timeout-first"),
    pytest.param((text("Hi"), APIConnectionError("reset")), (TextChunk("Hi"),),
                 (APIConnectionError, None, None), StreamEnding.INTERRUPTED, 1,
                 id="text-then-error-propagates"),
    pytest.param((text("Hi"), finish("stop"), APIConnectionError("reset")),
                 (TextChunk("Hi"), FinishChunk("stop")), (APIConnectionError, None, None),
                 StreamEnding.INTERRUPTED, 1, id="finish-then-error-propagates"),
    pytest.param((text("Hi"), usage(), APIConnectionError("reset")),
                 (TextChunk("Hi"), UsageChunk(7, 2)), (APIConnectionError, None, None),
                 StreamEnding.INTERRUPTED, 1, id="text-usage-then-error-propagates"),
]  # fmt: skip


@pytest.mark.parametrize("make", TRANSPORTS)
@pytest.mark.parametrize(("items", "chunks", "error", "ending", "closed"), ROWS)
async def test_both_transports_pump_alike(
    monkeypatch: pytest.MonkeyPatch, make: Make, items: tuple[Any, ...],
    chunks: tuple[Any, ...], error: tuple[type, str | None, int | None] | None,
    ending: StreamEnding, closed: int,
) -> None:
    opened: Opened = []
    got = await collect_stream(make(monkeypatch, items, opened, None), REQUEST)
    assert got.chunks == chunks
    if error is None:
        assert got.error is None
    else:
        kind_of = type(got.error), getattr(got.error, "kind", None)
        assert (*kind_of, getattr(got.error, "status", None)) == error
    assert got.reply.ending is ending
    assert [stream.closed for stream in opened] == [closed]


@pytest.mark.parametrize("make", TRANSPORTS)
async def test_an_empty_stream_says_so(monkeypatch: pytest.MonkeyPatch, make: Make) -> None:
    got = await collect_stream(make(monkeypatch, (usage(),), [], None), REQUEST)
    assert isinstance(got.error, ProviderError)
    assert (got.error.provider, got.error.message) == ("fake/m", EMPTY_STREAM)


@pytest.mark.parametrize("make", TRANSPORTS)
async def test_a_refused_request_keeps_its_status(
    monkeypatch: pytest.MonkeyPatch, make: Make
) -> None:
    got = await collect_stream(make(monkeypatch, (), [], RateLimitError("slow down")), REQUEST)
    assert isinstance(got.error, ProviderError)
    assert (got.error.kind, got.error.status) == ("rate_limit", 429)
    assert got.chunks == ()


@pytest.mark.parametrize("make", TRANSPORTS)
async def test_stopping_early_closes_the_stream(
    monkeypatch: pytest.MonkeyPatch, make: Make
) -> None:
    opened: Opened = []
    stream = make(monkeypatch, (text("a"), text("b"), finish("stop")), opened, None).stream(
        REQUEST)
    assert await stream.__anext__() == TextChunk("a")
    await stream.aclose()  # type: ignore[attr-defined]
    assert [s.closed for s in opened] == [1]


@pytest.mark.parametrize(
    ("kind", "status", "after"),
    [
        pytest.param("connection", None, ("interrupted", None), id="connection"),
        pytest.param("malformed", None, ("interrupted", None), id="malformed"),
        pytest.param("error", 500, ("interrupted", None), id="unnamed-with-invented-status"),
        pytest.param("timeout", None, ("timeout", None), id="timeout-stays"),
        pytest.param("rate_limit", 429, ("rate_limit", None), id="provider-kind-stays"),
        pytest.param("context_window", 400, ("context_window", None), id="overflow-stays"),
    ],
)  # fmt: skip
def test_started_failure(kind: str, status: int | None, after: tuple[str, int | None]) -> None:
    error = ProviderError(provider="p", message="m", status=status, kind=kind, retry_after_s=2.0)
    named = started_failure(error)
    assert (named.kind, named.status) == after
    assert (named.provider, named.message, named.retry_after_s) == ("p", "m", 2.0)
