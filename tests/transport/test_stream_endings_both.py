"""One table over both transports on real HTTP: the same stream endings reach the core.

Each row is played by the loopback server (OpenAI's SSE protocol with faults on the wire)
to the openai-SDK model and to the litellm model, and each must give the pure core the
same thing: a missing finish reason is interrupted, ``length`` is truncated, a stream cut
mid tool call never yields a tool call the loop would run, and a failure before output is
a ProviderError with the same kind, status and Retry-After as provider_errors.py names it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from mercury_nb.contract.turns.stream_ending import StreamEnding
from mercury_nb.testing import (
    DropMidStream,
    HttpError,
    LoopbackServer,
    MalformedChunk,
    NoFinish,
    Stall,
    Turn,
    call,
    collect_stream,
)
from mercury_nb.testing.collect import CollectedStream
from mercury_nb.transport.litellm_model import LiteLLMModel
from mercury_nb.transport.openai_model import OpenAIModel
from mercury_nb.transport.protocol import (
    ChatModel,
    FinishChunk,
    ModelRequest,
    ProviderError,
    ToolCallChunk,
    UsageChunk,
)

MakeServer = Callable[..., LoopbackServer]
KEY = "sk-test-very-secret-0123456789"
REQUEST = ModelRequest(messages=({"role": "user", "content": "build it"},), max_tokens=1234)
TOOLS = (
    {"type": "function", "function": {"name": "write_file", "parameters": {"type": "object"}}},
)


def _openai(server: LoopbackServer, timeout_s: float) -> ChatModel:
    return OpenAIModel("openai/m", "m", server.url, KEY, timeout_s)


def _litellm(server: LoopbackServer, timeout_s: float) -> ChatModel:
    return LiteLLMModel("openai/m", server.url, KEY, timeout_s)


TRANSPORTS = [pytest.param(_openai, id="openai-sdk"), pytest.param(_litellm, id="litellm")]


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest, litellm_module: Any) -> Callable[..., ChatModel]:
    factory: Callable[..., ChatModel] = request.param
    return factory


async def _play(
    make: Callable[..., ChatModel], server: LoopbackServer, request: ModelRequest = REQUEST,
    timeout_s: float = 30.0,
) -> CollectedStream:
    return await collect_stream(make(server, timeout_s), request)


def _content(got: CollectedStream) -> list[Any]:
    return [chunk for chunk in got.chunks if not isinstance(chunk, UsageChunk)]


WRITE = call("write_file", path="app.py", content="x" * 60)

ENDINGS = [
    pytest.param(Turn("Hello from the loopback server."), StreamEnding.COMPLETE, "stop",
                 id="text-stop"),
    pytest.param(Turn(tool_calls=(WRITE,), chunk_size=8), StreamEnding.COMPLETE, "tool_calls",
                 id="tool-calls"),
    pytest.param(Turn("filtered", finish_reason="content_filter"), StreamEnding.COMPLETE,
                 "content_filter", id="content-filter"),
    pytest.param(Turn("cut off mid-sent", finish_reason="length"), StreamEnding.TRUNCATED,
                 "length", id="length-is-truncated"),
    pytest.param(Turn("abcdefgh", chunk_size=2, fault=Stall(0.3, after_chunks=2)),
                 StreamEnding.COMPLETE, "stop", id="short-stall-still-arrives"),
    pytest.param(Turn("odd", finish_reason="other"), StreamEnding.INTERRUPTED, "other",
                 id="finish-other-is-interrupted"),
]  # fmt: skip


@pytest.mark.parametrize(("turn", "ending", "finish"), ENDINGS)
async def test_finished_streams(
    transport: Callable[..., ChatModel], loopback_server: MakeServer, turn: Turn,
    ending: StreamEnding, finish: str,
) -> None:
    server = loopback_server([turn])
    got = await _play(transport, server, ModelRequest(messages=REQUEST.messages, tools=TOOLS))
    assert got.error is None
    assert (got.reply.ending, got.reply.finish_reason) == (ending, finish)
    assert got.reply.text == turn.text
    assert [(c.name, c.arguments) for c in got.reply.tool_calls] == [
        (spec.name, spec.arguments_json) for spec in turn.tool_calls
    ]
    assert len(server.requests) == 1, "the transport must never retry on its own"


async def test_finish_error_is_interrupted(
    transport: Callable[..., ChatModel], loopback_server: MakeServer
) -> None:
    """The SDK passes ``error`` on as the finish reason; litellm raises mid-stream: the
    core sees an interrupted stream either way."""
    server = loopback_server([Turn("failed", finish_reason="error")])
    got = await _play(transport, server)
    assert got.reply.ending is StreamEnding.INTERRUPTED
    assert got.reply.text == "failed"
    assert len(server.requests) == 1


BROKEN_AFTER_OUTPUT = [
    pytest.param(Turn("no finish", fault=NoFinish()), id="no-finish-no-done-silent-cut"),
    pytest.param(Turn("no finish", fault=NoFinish(send_done=True)), id="no-finish-then-done"),
    pytest.param(Turn("no finish", finish_reason=None), id="finish-none"),
    pytest.param(Turn("abcdefgh", chunk_size=2, fault=DropMidStream(2)), id="drop-mid-text"),
    pytest.param(Turn("all of it", fault=DropMidStream(99)), id="drop-before-finish"),
    pytest.param(Turn("abcdefgh", chunk_size=2, fault=MalformedChunk(1)), id="malformed-chunk"),
    pytest.param(Turn("writing", tool_calls=(WRITE,), chunk_size=8, fault=DropMidStream(3)),
                 id="drop-mid-tool-call"),
    pytest.param(Turn("writing", tool_calls=(WRITE,), chunk_size=8, fault=NoFinish()),
                 id="tool-call-without-finish"),
]  # fmt: skip


@pytest.mark.parametrize("turn", BROKEN_AFTER_OUTPUT)
async def test_broken_streams_are_interrupted_and_their_calls_never_run(
    transport: Callable[..., ChatModel], loopback_server: MakeServer, turn: Turn
) -> None:
    server = loopback_server([turn])
    got = await _play(transport, server, ModelRequest(messages=REQUEST.messages, tools=TOOLS))
    assert not any(isinstance(c, FinishChunk) for c in got.chunks)
    assert got.reply.ending is StreamEnding.INTERRUPTED
    assert got.reply.finish_reason is None
    assert not got.reply.complete, "the loop runs tool calls only from a complete reply"
    assert not isinstance(got.error, ProviderError), "a failure after output is not a refusal"
    if turn.tool_calls and "drop" in str(turn.fault).lower():
        sent = "".join(c.arguments for c in got.chunks if isinstance(c, ToolCallChunk))
        assert sent != turn.tool_calls[0].arguments_json, "the call was cut"
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("turn", "kind"),
    [
        pytest.param(Turn("never", fault=DropMidStream(0)), "interrupted", id="drop-before-output"),
        pytest.param(Turn("never", fault=MalformedChunk(0)), "interrupted",
                     id="malformed-before-output"),
        pytest.param(Turn(fault=NoFinish()), "interrupted", id="empty-no-finish"),
    ],
)  # fmt: skip
async def test_broken_before_any_output_is_a_provider_error(
    transport: Callable[..., ChatModel], loopback_server: MakeServer, turn: Turn, kind: str
) -> None:
    server = loopback_server([turn])
    got = await _play(transport, server)
    assert _content(got) == []
    assert isinstance(got.error, ProviderError)
    assert (got.error.provider, got.error.kind, got.error.status) == ("openai/m", kind, None)
    assert got.reply.ending is StreamEnding.INTERRUPTED
    assert len(server.requests) == 1


async def test_a_stall_longer_than_the_timeout_is_a_timeout(
    transport: Callable[..., ChatModel], loopback_server: MakeServer
) -> None:
    server = loopback_server([Turn("late", fault=Stall(60))])
    got = await _play(transport, server, timeout_s=0.5)
    assert isinstance(got.error, ProviderError)
    assert (got.error.kind, got.error.status) == ("timeout", None)
    assert got.reply.ending is StreamEnding.INTERRUPTED


@pytest.mark.parametrize(
    ("fault", "kind", "retry_after_s"),
    [
        pytest.param(HttpError(429, retry_after=1), "rate_limit", 1.0, id="429-retry-after"),
        pytest.param(HttpError(429, retry_after=2.5), "rate_limit", 2.5, id="429-fractional"),
        pytest.param(HttpError(429), "rate_limit", None, id="429-no-header"),
        pytest.param(HttpError(500), "server_error", None, id="500"),
        pytest.param(HttpError(503, retry_after=7), "server_error", 7.0, id="503-retry-after"),
        pytest.param(HttpError(400, message="tool_choice required unsupported"), "bad_request",
                     None, id="400"),
        pytest.param(HttpError(401, message="Incorrect API key"), "auth", None, id="401"),
        pytest.param(HttpError(403, message="no access to this model"), "permission", None,
                     id="403"),
        pytest.param(HttpError(404, message="model not found"), "not_found", None, id="404"),
        pytest.param(HttpError(422, message="unprocessable"), "bad_request", None, id="422"),
    ],
)  # fmt: skip
async def test_http_errors_are_classified_alike(
    transport: Callable[..., ChatModel], loopback_server: MakeServer, fault: HttpError,
    kind: str, retry_after_s: float | None,
) -> None:
    server = loopback_server([Turn("never", fault=fault)])
    got = await _play(transport, server)
    error = got.error
    assert isinstance(error, ProviderError)
    assert (error.provider, error.status, error.kind) == ("openai/m", fault.status, kind)
    assert error.retry_after_s == retry_after_s
    assert fault.message in error.message
    assert got.chunks == ()
    assert len(server.requests) == 1, "the transport must never retry on its own"


async def test_the_key_never_shows_in_an_error(
    transport: Callable[..., ChatModel], loopback_server: MakeServer
) -> None:
    leak = f"Incorrect API key provided: {KEY}. Find your key at the dashboard."
    server = loopback_server([Turn(fault=HttpError(401, message=leak))])
    got = await _play(transport, server)
    assert isinstance(got.error, ProviderError)
    assert KEY not in f"{got.error} {got.error!r} {got.error.details}"
    assert "***" in got.error.message


async def test_usage_is_reported(
    transport: Callable[..., ChatModel], loopback_server: MakeServer
) -> None:
    server = loopback_server([Turn("Four.")])
    got = await _play(transport, server)
    assert server.requests[0].get("stream_options") == {"include_usage": True}
    usage = [c for c in got.chunks if isinstance(c, UsageChunk)]
    assert len(usage) == 1
    prompt = max(1, len(json.dumps(server.requests[0]["messages"])) // 4)
    assert (usage[0].prompt_tokens, usage[0].completion_tokens) == (prompt, 1)
    assert got.reply.ending is StreamEnding.COMPLETE
