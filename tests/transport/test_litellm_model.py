"""The real litellm -> HTTP -> loopback path, fault by fault, through the stream assembly."""

from __future__ import annotations

import json
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import SecretStr

from mercury_nb.contract.turns.stream_ending import StreamEnding
from mercury_nb.testing import (
    DropMidStream,
    HttpError,
    LoopbackServer,
    MalformedChunk,
    NoFinish,
    Stall,
    ToolCallSpec,
    Turn,
    call,
    collect_stream,
)
from mercury_nb.testing.collect import CollectedStream
from mercury_nb.transport import litellm_model, stream_pump
from mercury_nb.transport.litellm_model import LiteLLMModel
from mercury_nb.transport.protocol import (
    FinishChunk,
    ModelRequest,
    ProviderError,
    TextChunk,
    UsageChunk,
)

MakeServer = Callable[..., LoopbackServer]
KEY = "sk-test-very-secret-0123456789"
REQUEST = ModelRequest(messages=({"role": "user", "content": "build it"},), max_tokens=1234)
TOOLS = (
    {"type": "function", "function": {"name": "create_file", "parameters": {"type": "object"}}},
)


@pytest.fixture(autouse=True)
def _litellm(litellm_module: Any) -> None:
    """One litellm import for the whole session (the plugin's session fixture)."""


async def _run(
    server: LoopbackServer, request: ModelRequest = REQUEST, timeout_s: float = 30.0
) -> CollectedStream:
    model = LiteLLMModel("openai/m", api_base=server.url, api_key=KEY, timeout_s=timeout_s)
    return await collect_stream(model, request)


# --- streams that end, one way or another --------------------------------------------------

ENDINGS = [
    pytest.param(Turn("Hello from the loopback server."), StreamEnding.COMPLETE, "stop",
                 id="text-complete"),
    pytest.param(Turn("cut off mid-sent", finish_reason="length"), StreamEnding.TRUNCATED, "length",
                 id="finish-length"),
    pytest.param(Turn("abcdefgh", chunk_size=2, fault=Stall(0.3, after_chunks=2)),
                 StreamEnding.COMPLETE, "stop", id="short-stall-still-arrives"),
    pytest.param(Turn("filtered", finish_reason="content_filter"), StreamEnding.COMPLETE,
                 "content_filter", id="content-filter"),
    pytest.param(Turn("odd", finish_reason="other"), StreamEnding.INTERRUPTED, "other",
                 id="finish-other-not-papered-into-stop"),
    pytest.param(Turn("odd", finish_reason="network_error"), StreamEnding.INTERRUPTED,
                 "network_error", id="finish-network-error"),
    pytest.param(Turn("odd", finish_reason="end_turn"), StreamEnding.COMPLETE, "stop",
                 id="anthropic-end-turn-mapped"),
]  # fmt: skip


@pytest.mark.parametrize(("turn", "ending", "finish"), ENDINGS)
async def test_stream_endings(
    loopback_server: MakeServer, turn: Turn, ending: StreamEnding, finish: str
) -> None:
    server = loopback_server([turn])
    got = await _run(server)
    assert got.error is None
    assert got.reply.text == turn.text
    assert got.reply.finish_reason == finish
    assert got.reply.ending is ending
    assert len(server.requests) == 1


async def test_tool_calls_with_split_arguments(loopback_server: MakeServer) -> None:
    turn = Turn(
        "Creating the files.",
        tool_calls=(
            call("create_file", path="app.py", content="def main():\n    return 42\n"),
            call("run_command", command="python -m pytest -q", timeout_s=60),
        ),
        chunk_size=5,
    )
    server = loopback_server([turn])
    got = await _run(server, ModelRequest(messages=REQUEST.messages, tools=TOOLS))
    assert got.reply.ending is StreamEnding.COMPLETE
    assert got.reply.finish_reason == "tool_calls"
    assert got.reply.text == "Creating the files."
    calls = [(c.id, c.name, json.loads(c.arguments)) for c in got.reply.tool_calls]
    assert calls == [
        ("call_0_0", "create_file", {"path": "app.py", "content": "def main():\n    return 42\n"}),
        ("call_0_1", "run_command", {"command": "python -m pytest -q", "timeout_s": 60}),
    ]


@pytest.mark.parametrize(
    ("spec", "arguments"),
    [
        pytest.param(ToolCallSpec("write_file", '{"path": "a.py", "content": "x'), None,
                     id="malformed-arguments"),
        pytest.param(call("no_such_tool", x=1), {"x": 1}, id="unknown-tool"),
    ],
)  # fmt: skip
async def test_bad_tool_calls_arrive_intact_for_the_loop_to_refuse(
    loopback_server: MakeServer, spec: ToolCallSpec, arguments: dict[str, Any] | None
) -> None:
    server = loopback_server([Turn(tool_calls=(spec,), chunk_size=4)])
    got = await _run(server, ModelRequest(messages=REQUEST.messages, tools=TOOLS))
    assert got.reply.ending is StreamEnding.COMPLETE
    (assembled,) = got.reply.tool_calls
    assert assembled.name == spec.name
    assert assembled.arguments == spec.arguments_json
    if arguments is not None:
        assert json.loads(assembled.arguments) == arguments


# --- broken streams: never complete ---------------------------------------------------------

BROKEN_AFTER_OUTPUT = [
    pytest.param(Turn("abcdefgh", chunk_size=2, fault=DropMidStream(2)), id="drop-mid-text"),
    pytest.param(Turn(tool_calls=(call("write_file", path="a", content="x" * 40),), chunk_size=8,
                      fault=DropMidStream(3)), id="drop-mid-tool-call"),
    pytest.param(Turn("all of it", fault=DropMidStream(99)), id="drop-before-finish"),
    pytest.param(Turn("no finish", fault=NoFinish()), id="no-finish-no-done"),
    pytest.param(Turn("no finish", fault=NoFinish(send_done=True)), id="no-finish-with-done"),
    pytest.param(Turn("no finish", finish_reason=None), id="finish-none"),
    pytest.param(Turn("failed", finish_reason="error"), id="finish-error"),
    pytest.param(Turn("abcdefgh", chunk_size=2, fault=MalformedChunk(1)), id="malformed-chunk"),
]  # fmt: skip


@pytest.mark.parametrize("turn", BROKEN_AFTER_OUTPUT)
async def test_broken_streams_are_interrupted_never_complete(
    loopback_server: MakeServer, turn: Turn
) -> None:
    server = loopback_server([turn])
    got = await _run(server)
    assert got.error is not None
    assert not isinstance(got.error, ProviderError), "errors after output propagate as raised"
    assert not any(isinstance(c, FinishChunk) for c in got.chunks)
    assert got.reply.ending is StreamEnding.INTERRUPTED
    assert got.reply.finish_reason is None
    assert len(server.requests) == 1, "litellm must not retry on its own"


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
    loopback_server: MakeServer, turn: Turn, kind: str
) -> None:
    server = loopback_server([turn])
    got = await _run(server)
    assert got.chunks == ()
    assert isinstance(got.error, ProviderError)
    assert (got.error.provider, got.error.kind, got.error.status) == ("openai/m", kind, None)
    assert got.reply.ending is StreamEnding.INTERRUPTED
    assert len(server.requests) == 1


async def test_a_stall_longer_than_the_timeout_fails(loopback_server: MakeServer) -> None:
    server = loopback_server([Turn("late", fault=Stall(60))])
    got = await _run(server, timeout_s=0.5)
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
        pytest.param(HttpError(404, message="model not found"), "not_found", None, id="404"),
    ],
)  # fmt: skip
async def test_http_errors_become_provider_errors(
    loopback_server: MakeServer, fault: HttpError, kind: str, retry_after_s: float | None
) -> None:
    server = loopback_server([Turn("never", fault=fault)])
    got = await _run(server)
    error = got.error
    assert isinstance(error, ProviderError)
    assert (error.provider, error.status, error.kind) == ("openai/m", fault.status, kind)
    assert error.retry_after_s == retry_after_s
    assert fault.message in error.message
    assert got.chunks == ()
    assert got.reply.ending is StreamEnding.INTERRUPTED
    assert len(server.requests) == 1, "litellm must not retry on its own"


async def test_api_key_never_shows_in_a_provider_error(loopback_server: MakeServer) -> None:
    leak = f"Incorrect API key provided: {KEY}. Find your key at the dashboard."
    server = loopback_server([Turn(fault=HttpError(401, message=leak))])
    model = LiteLLMModel("openai/m", server.url, SecretStr(KEY), 30.0)
    got = await collect_stream(model, REQUEST)
    assert isinstance(got.error, ProviderError)
    shown = f"{got.error} {got.error!r} {got.error.message} {got.error.details}"
    assert KEY not in shown
    assert "***" in got.error.message
    assert got.error.__cause__ is None and got.error.__suppress_context__


# --- the request litellm sends -------------------------------------------------------------


async def test_request_shape_without_and_with_tools(loopback_server: MakeServer) -> None:
    server = loopback_server([Turn("one"), Turn("two")])
    await _run(server)
    await _run(server, ModelRequest(messages=REQUEST.messages, tools=TOOLS, tool_choice="required"))
    plain, forced = server.requests
    assert plain["model"] == "m"
    assert plain["stream"] is True
    assert plain["messages"] == [{"role": "user", "content": "build it"}]
    assert plain.get("max_tokens", plain.get("max_completion_tokens")) == 1234
    assert "tools" not in plain and "tool_choice" not in plain
    assert forced["tools"] == list(TOOLS)
    assert forced["tool_choice"] == "required"


async def test_messages_sent_are_not_modified(loopback_server: MakeServer) -> None:
    messages = ({"role": "user", "content": [{"type": "text", "text": "hi"}]},)
    before = json.dumps(messages)
    server = loopback_server([Turn("ok")])
    await _run(server, ModelRequest(messages=messages))
    assert json.dumps(messages) == before


def test_each_message_is_copied_from_json_made_once() -> None:
    """litellm gets its own copy of the conversation (it may edit it in place), but no step
    walks the whole conversation in Python: each message is serialized once over the task."""
    model = LiteLLMModel("openai/m", "http://127.0.0.1:1/v1")
    talk = tuple({"role": "user", "content": [{"type": "text", "text": f"t{n}"}]}
                 for n in range(100))
    for length in (50, 80, 100):
        kwargs = model.completion_kwargs(ModelRequest(talk[:length], tools=TOOLS))
        assert kwargs["messages"] == list(talk[:length]) and kwargs["tools"] == list(TOOLS)
        kwargs["messages"][0]["content"][0]["text"] = "edited by litellm"
        assert talk[0]["content"][0]["text"] == "t0"  # a copy, nested lists included
    assert model.encoder.serialized == 100  # not 50 + 80 + 100


async def test_consumer_stopping_early_closes_the_stream(
    loopback_server: MakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed: list[Any] = []
    real_close = stream_pump.close_quietly

    async def recording_close(response: Any) -> None:
        closed.append(response)
        await real_close(response)

    monkeypatch.setattr(stream_pump, "close_quietly", recording_close)
    server = loopback_server([Turn("a" * 64, chunk_size=4)])
    stream = LiteLLMModel("openai/m", server.url, KEY, 30.0).stream(REQUEST)
    first = await stream.__anext__()
    await stream.aclose()  # type: ignore[attr-defined]
    assert first == TextChunk("aaaa")
    assert len(closed) == 1


def test_usage_chunks_are_mapped() -> None:
    usage = SimpleNamespace(prompt_tokens=12, completion_tokens=3)
    raw = SimpleNamespace(choices=[], usage=usage)
    assert list(litellm_model.stream_chunks(raw)) == [UsageChunk(12, 3)]

