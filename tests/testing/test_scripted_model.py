"""The scripted model: chunking, finish reasons, faults, leftovers, the registry and fixtures."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.turns.stream_ending import StreamEnding
from mercury_nb.testing import (
    DropMidStream,
    HttpError,
    MalformedChunk,
    MalformedChunkError,
    NoFinish,
    ScriptedModel,
    ScriptExhausted,
    Stall,
    ToolCallSpec,
    Turn,
    call,
    collect_stream,
    get_scripted_model,
    register_scripted_model,
    scripted,
    unregister_scripted_model,
)
from mercury_nb.transport.factory import resolve_model
from mercury_nb.transport.litellm_model import LiteLLMModel
from mercury_nb.transport.protocol import (
    ChatModel,
    FinishChunk,
    ModelRequest,
    ProviderError,
    TextChunk,
    ToolCallChunk,
)

REQUEST = ModelRequest(messages=({"role": "user", "content": "build it"},))


async def test_text_arrives_in_chunk_size_pieces_and_completes() -> None:
    model = ScriptedModel([Turn("hello brave new world", chunk_size=5)])
    got = await collect_stream(model, REQUEST)
    assert got.chunks[:-1] == (
        TextChunk("hello"),
        TextChunk(" brav"),
        TextChunk("e new"),
        TextChunk(" worl"),
        TextChunk("d"),
    )
    assert got.chunks[-1] == FinishChunk("stop")
    assert got.reply.text == "hello brave new world"
    assert got.reply.ending is StreamEnding.COMPLETE
    model.assert_complete()


async def test_tool_call_arguments_are_split_and_reassembled() -> None:
    turn = Turn(
        "Writing it.",
        tool_calls=(
            call("create_file", path="app.py", content="print('hi')\n" * 3),
            ToolCallSpec("run_command", {"command": "pytest -q"}, id="call_mine"),
        ),
        chunk_size=7,
    )
    model = ScriptedModel([turn])
    got = await collect_stream(model, REQUEST)
    pieces = [c for c in got.chunks if isinstance(c, ToolCallChunk) and c.index == 0]
    assert pieces[0] == ToolCallChunk(0, "call_0_0", "create_file", "")
    assert len(pieces) > 3
    assert all(p.id is None and p.name is None for p in pieces[1:])
    first, second = got.reply.tool_calls
    assert (first.id, first.name) == ("call_0_0", "create_file")
    assert json.loads(first.arguments) == {"path": "app.py", "content": "print('hi')\n" * 3}
    assert (second.id, second.name, json.loads(second.arguments)) == (
        "call_mine",
        "run_command",
        {"command": "pytest -q"},
    )
    assert got.reply.finish_reason == "tool_calls"
    assert got.reply.ending is StreamEnding.COMPLETE


@pytest.mark.parametrize(
    ("turn", "finish", "ending"),
    [
        pytest.param(Turn("done"), "stop", StreamEnding.COMPLETE, id="auto-text-stop"),
        pytest.param(Turn(tool_calls=(call("list_dir", path="."),)), "tool_calls",
                     StreamEnding.COMPLETE, id="auto-tool-calls"),
        pytest.param(Turn("cut", finish_reason="length"), "length", StreamEnding.TRUNCATED,
                     id="length-truncated"),
        pytest.param(Turn("hm", finish_reason="content_filter"), "content_filter",
                     StreamEnding.COMPLETE, id="content-filter"),
        pytest.param(Turn("?", finish_reason="other"), "other", StreamEnding.INTERRUPTED,
                     id="other-interrupted"),
        pytest.param(Turn("no end", finish_reason=None), None, StreamEnding.INTERRUPTED,
                     id="none-sends-no-finish"),
        pytest.param(Turn("no end", fault=NoFinish()), None, StreamEnding.INTERRUPTED,
                     id="no-finish-fault"),
        pytest.param(Turn("x", finish_reason="stop", fault=NoFinish(send_done=True)), None,
                     StreamEnding.INTERRUPTED, id="no-finish-beats-explicit-reason"),
    ],
)  # fmt: skip
async def test_finish_reasons(turn: Turn, finish: str | None, ending: StreamEnding) -> None:
    got = await collect_stream(ScriptedModel([turn]), REQUEST)
    finishes = [c for c in got.chunks if isinstance(c, FinishChunk)]
    assert finishes == ([] if finish is None else [FinishChunk(finish)])
    assert got.error is None
    assert got.reply.ending is ending


@pytest.mark.parametrize(
    ("fault", "error_type", "chunks_before"),
    [
        pytest.param(DropMidStream(2), ConnectionError, 2, id="drop-after-2"),
        pytest.param(DropMidStream(0), ConnectionError, 0, id="drop-before-any"),
        pytest.param(DropMidStream(99), ConnectionError, 4, id="drop-just-before-finish"),
        pytest.param(MalformedChunk(1), MalformedChunkError, 1, id="malformed-after-1"),
    ],
)
async def test_mid_stream_faults_interrupt(
    fault: DropMidStream | MalformedChunk, error_type: type[Exception], chunks_before: int
) -> None:
    model = ScriptedModel([Turn("abcdefgh", chunk_size=2, fault=fault)])
    got = await collect_stream(model, REQUEST)
    assert isinstance(got.error, error_type)
    assert len(got.chunks) == chunks_before
    assert not any(isinstance(c, FinishChunk) for c in got.chunks)
    assert got.reply.ending is StreamEnding.INTERRUPTED


def test_malformed_chunk_error_is_a_value_error() -> None:
    assert issubclass(MalformedChunkError, ValueError)


@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        pytest.param(HttpError(429, retry_after=2.5), "rate_limit", id="429"),
        pytest.param(HttpError(500), "server_error", id="500"),
        pytest.param(HttpError(503, retry_after=1), "server_error", id="503"),
        pytest.param(HttpError(400, message="tool_choice not supported"), "bad_request", id="400"),
        pytest.param(HttpError(401), "auth", id="401"),
    ],
)
async def test_http_error_raises_provider_error_before_any_chunk(
    fault: HttpError, kind: str
) -> None:
    model = ScriptedModel([Turn("never sent", fault=fault)], name="scripted/a")
    got = await collect_stream(model, REQUEST)
    assert got.chunks == ()
    assert isinstance(got.error, ProviderError)
    assert (got.error.provider, got.error.status, got.error.kind) == (
        "scripted/a",
        fault.status,
        kind,
    )
    assert got.error.retry_after_s == fault.retry_after
    assert got.error.message == fault.message
    assert got.reply.ending is StreamEnding.INTERRUPTED


async def test_stall_sleeps_then_delivers_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    real_sleep = asyncio.sleep

    async def recording_sleep(seconds: float) -> None:
        slept.append(seconds)
        await real_sleep(0)

    monkeypatch.setattr(asyncio, "sleep", recording_sleep)
    model = ScriptedModel([Turn("abcdef", chunk_size=2, fault=Stall(42.0, after_chunks=1))])
    got = await collect_stream(model, REQUEST)
    assert slept == [42.0]
    assert got.reply.text == "abcdef"
    assert got.reply.ending is StreamEnding.COMPLETE


async def test_records_requests_and_callable_turns_see_them() -> None:
    def echo(request: ModelRequest) -> Turn:
        return Turn(f"you said {request.messages[-1]['content']}")

    model = ScriptedModel([Turn("first"), echo])
    await collect_stream(model, REQUEST)
    second = ModelRequest(messages=({"role": "user", "content": "again"},), tool_choice="required")
    got = await collect_stream(model, second)
    assert got.reply.text == "you said again"
    assert model.requests == [REQUEST, second]
    assert model.remaining == 0


async def test_callable_must_return_a_turn() -> None:
    model = ScriptedModel([lambda request: "not a turn"])
    got = await collect_stream(model, REQUEST)
    assert isinstance(got.error, TypeError)


async def test_asking_beyond_the_script_raises_and_is_remembered() -> None:
    model = ScriptedModel([Turn("only one")], name="scripted/short")
    await collect_stream(model, REQUEST)
    with pytest.raises(ScriptExhausted, match=r"asked for turn 2 but only 1 turn\(s\)") as caught:
        async for _ in model.stream(REQUEST):
            pass
    assert isinstance(caught.value, AssertionError)
    assert "build it" in str(caught.value)
    with pytest.raises(AssertionError, match="1 request\\(s\\) beyond the script"):
        model.assert_complete()


def test_assert_complete_lists_unused_turns() -> None:
    model = ScriptedModel([Turn("one"), Turn("two", finish_reason="length")])
    assert model.remaining == 2
    with pytest.raises(AssertionError) as caught:
        model.assert_complete()
    message = str(caught.value)
    assert "2 scripted turn(s) unused" in message
    assert "#1: Turn(text='one'" in message
    assert "#2: Turn(text='two'" in message


async def test_scripted_context_manager_checks_on_exit() -> None:
    with scripted([Turn("a")]) as model:
        await collect_stream(model, REQUEST)
    with pytest.raises(AssertionError, match="1 scripted turn"), scripted([Turn("unused")]):
        pass


def test_scripted_model_satisfies_the_protocol() -> None:
    assert isinstance(ScriptedModel([]), ChatModel)


def test_registry_round_trip_and_factory() -> None:
    model = register_scripted_model("reg-demo", [Turn("hi")])
    try:
        assert model.name == "scripted/reg-demo"
        assert get_scripted_model("scripted/reg-demo") is model
        assert get_scripted_model("reg-demo") is model
        assert resolve_model("scripted/reg-demo", MercuryConfig()) is model
        mine = ScriptedModel([], name="scripted/custom")
        assert register_scripted_model("scripted/reg-demo", mine) is mine
        assert get_scripted_model("reg-demo") is mine
    finally:
        unregister_scripted_model("reg-demo")
    with pytest.raises(LookupError, match="no scripted model named 'scripted/reg-demo'"):
        resolve_model("scripted/reg-demo", MercuryConfig())


def test_factory_builds_a_litellm_model_from_the_config() -> None:
    config = MercuryConfig(api_base="http://127.0.0.1:1/v1", api_key="sk-x", request_timeout_s=12)
    model = resolve_model("anthropic/claude-test", config)
    assert isinstance(model, LiteLLMModel)
    kwargs = model.completion_kwargs(REQUEST)
    assert (model.name, kwargs["api_base"], kwargs["api_key"], kwargs["timeout"]) == (
        "anthropic/claude-test",
        "http://127.0.0.1:1/v1",
        "sk-x",
        12,
    )


async def test_fixture_registers_and_plays(
    scripted_model: Callable[..., ScriptedModel],
) -> None:
    model = scripted_model([Turn("via fixture")], register="fixture-demo")
    assert get_scripted_model("fixture-demo") is model
    got = await collect_stream(resolve_model("scripted/fixture-demo", MercuryConfig()), REQUEST)
    assert got.reply.text == "via fixture"


def test_fixtures_fail_a_test_that_leaves_turns_unused(tmp_path: Path) -> None:
    test_file = tmp_path / "test_leftovers.py"
    test_file.write_text(
        textwrap.dedent(
            """
            from mercury_nb.testing import Turn

            def test_leaves_a_turn(scripted_model):
                scripted_model([Turn("never played")], name="scripted/leftover")

            def test_leaves_a_server_turn(loopback_server):
                loopback_server([Turn("never served")])

            def test_fails_itself(scripted_model):
                scripted_model([Turn("unused")])
                assert False, "the body's own failure"

            def test_clean(scripted_model):
                scripted_model([])
            """
        )
    )
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "mercury_nb.testing.pytest_plugin",
         "-p", "no:cacheprovider", str(test_file)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    out = result.stdout
    assert "1 failed, 3 passed, 2 errors" in out, out
    assert "scripted/leftover: 1 scripted turn(s) unused" in out
    assert "LoopbackServer: 1 scripted turn(s) unused" in out
    assert "ERROR test_leftovers.py::test_fails_itself" not in out
