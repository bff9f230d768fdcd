"""The replay fake: recordings load, replies play in order, requests are kept in their shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mercury_nb.testing import ScriptExhausted, ToolCallSpec, collect_stream
from mercury_nb.testing.replay import (
    LARGE_WINDOW,
    SMALL_WINDOW,
    ReplayModel,
    load_recording,
    observed_on,
    props_for,
    replay_server,
    shape_of_request,
)
from mercury_nb.transport.context_probe import probe_window_sync
from mercury_nb.transport.openai_model import OpenAIModel
from mercury_nb.transport.protocol import ModelRequest, ProviderError, UsageChunk

DATA = Path(__file__).resolve().parents[1] / "replays" / "data"


def _request(content: str, tool_choice: str = "auto") -> ModelRequest:
    tools = ({"type": "function", "function": {"name": "create_file", "parameters": {}}},)
    return ModelRequest(messages=({"role": "user", "content": content},), tools=tools,
                        tool_choice=tool_choice, max_tokens=2048)  # type: ignore[arg-type]


def test_a_recording_loads_with_its_task_requests_and_replies() -> None:
    recording = load_recording(DATA / "r9_shim_hello.json")
    assert recording.task == "Create hello.py that prints hello world, and run it."
    assert recording.mode == "execute" and recording.tool_forcing
    assert recording.get_paths == ("/props",)
    shapes = recording.requests
    assert [s.tool_choice for s in shapes] == ["auto", "required", "auto"]
    assert [s.messages for s in shapes] == [2, 5, 7]
    assert shapes[1].forced and not shapes[0].forced
    assert len(shapes[0].tools) == 12 and "create_file" in shapes[1].tools
    assert shapes[0].last == {"role": "user", "content": recording.task}
    turns = recording.turns
    assert turns[1].tool_calls == (
        ToolCallSpec("create_file", '{"path": "file.txt", "content": "A sample file"}'),)
    assert turns[1].finish_reason == "tool_calls" and turns[1].usage == (1455, 29)
    assert turns[0].text.startswith("```python") and turns[0].finish_reason == "stop"


def test_flags_and_a_task_left_out_are_read_back() -> None:
    chat = load_recording(DATA / "r4_readme.json")
    assert (chat.mode, chat.task) == ("chat", "Summarise README.md in one sentence.")
    unnamed = load_recording(DATA / "r14a_run_sleep_as_chat.json")
    assert (unnamed.mode, unnamed.task) == ("execute", "Run the shell command: sleep 300")


def test_a_cut_last_message_is_kept_as_text() -> None:
    summary = load_recording(DATA / "r7b_ctx2048_window8192.json").requests[-1]
    assert summary.last is None and summary.last_message.startswith('{"role": "user"')
    assert (summary.tool_choice, summary.tools, summary.max_tokens) == (None, (), 512)


async def test_the_model_plays_the_replies_in_order_and_keeps_the_requests() -> None:
    recording = load_recording(DATA / "r9_shim_hello.json")
    model = ReplayModel(recording)
    first = await collect_stream(model, _request("Create hello.py"))
    forced = await collect_stream(model, _request("[SYSTEM: FORCED ACTION]", "required"))
    last = await collect_stream(model, _request("created file.txt"))
    assert first.reply.text == recording.turns[0].text and not first.reply.tool_calls
    assert [c.name for c in forced.reply.tool_calls] == ["create_file"]
    assert json.loads(forced.reply.tool_calls[0].arguments)["path"] == "file.txt"
    assert UsageChunk(1455, 29) in forced.chunks
    assert last.reply.text.startswith("I'm sorry")
    assert [s.tool_choice for s in model.observed] == ["auto", "required", "auto"]
    assert model.observed[1].tools == ("create_file",)
    assert model.observed[0].last == {"role": "user", "content": "Create hello.py"}
    model.assert_complete()


async def test_asking_beyond_the_recording_fails_loudly_by_default() -> None:
    model = ReplayModel(load_recording(DATA / "r3_chat.json"))
    await collect_stream(model, _request("What is 2+2?"))
    beyond = await collect_stream(model, _request("again"))
    assert isinstance(beyond.error, ScriptExhausted) and not beyond.chunks
    with pytest.raises(AssertionError, match="beyond the script"):
        model.assert_complete()


async def test_repeat_last_answers_like_a_stuck_model() -> None:
    model = ReplayModel(load_recording(DATA / "r3_chat.json"), on_exhausted="repeat_last")
    replies = [await collect_stream(model, _request(f"ask {n}")) for n in range(3)]
    assert {r.reply.text for r in replies} == {"2 + 2 = 4\n2 + 4 = 6"}
    assert [shape_of_request(r).last for r in model.repeated] == [
        {"role": "user", "content": "ask 1"}, {"role": "user", "content": "ask 2"}]
    model.assert_complete()


async def test_a_recorded_error_body_is_a_provider_error_with_its_status() -> None:
    recording = load_recording(DATA / "r7b_ctx2048_window8192.json")
    model = ReplayModel(recording)
    for _ in range(6):
        assert (await collect_stream(model, _request("x"))).error is None
    failed = (await collect_stream(model, _request("x"))).error
    assert isinstance(failed, ProviderError) and failed.status == 400
    assert "exceeds the available context size (2048 tokens)" in failed.message
    summary = await collect_stream(model, _request("summarize"))
    assert summary.reply.finish_reason == "length"


def test_absolute_paths_under_the_recorded_root_move_into_the_workspace(tmp_path: Path) -> None:
    recording = load_recording(DATA / "r10_shim_calc.json")
    recorded = json.loads(recording.turns[1].tool_calls[0].arguments_json)
    moved = json.loads(recording.turns_in(tmp_path)[1].tool_calls[0].arguments_json)
    assert recorded["path"].startswith("/workspace/")
    assert moved["path"] == str(tmp_path) + recorded["path"].removeprefix("/workspace")
    relative = load_recording(DATA / "r9_shim_hello.json").turns_in(tmp_path)[1]
    assert json.loads(relative.tool_calls[0].arguments_json)["path"] == "file.txt"


def test_props_follow_the_server_setup() -> None:
    def props(name: str) -> dict[str, object]:
        return props_for(load_recording(DATA / f"{name}.json"))

    default, small, shim = props("r1_hello"), props("r7_ctx2048"), props("r9_shim_hello")
    assert default["chat_template_caps"] == {"supports_tools": False,
                                             "supports_tool_calls": False}
    assert default["default_generation_settings"] == {"n_ctx": LARGE_WINDOW}
    assert small["default_generation_settings"] == {"n_ctx": SMALL_WINDOW}
    assert shim["chat_template_caps"]["supports_tools"] is True  # type: ignore[index]


async def test_the_server_replays_over_http_to_the_openai_sdk() -> None:
    recording = load_recording(DATA / "r9_shim_hello.json")
    with replay_server(recording) as server:
        model = OpenAIModel("smollm2", base_url=server.url, api_key="sk-test", timeout_s=30)
        assert probe_window_sync(server.url, "smollm2") == LARGE_WINDOW
        replies = [await collect_stream(model, _request("go", choice))
                   for choice in ("auto", "required", "auto")]
        server.assert_complete()
    assert server.get_requests == ["/props"]
    assert replies[1].reply.tool_calls[0].name == "create_file"
    assert UsageChunk(1455, 29) in replies[1].chunks  # the recorded usage, not an estimate
    assert replies[2].reply.text == recording.turns[2].text
    assert [s.tool_choice for s in observed_on(server)] == ["auto", "required", "auto"]


async def test_the_server_repeats_or_refuses_beyond_the_recording() -> None:
    recording = load_recording(DATA / "r3_chat.json")
    model_of = "smollm2"
    with replay_server(recording, on_exhausted="repeat_last") as repeating:
        model = OpenAIModel(model_of, base_url=repeating.url, api_key="sk-test", timeout_s=30)
        texts = [(await collect_stream(model, _request("q"))).reply.text for _ in range(3)]
    assert set(texts) == {recording.turns[0].text} and len(repeating.repeated) == 2
    with replay_server(recording) as refusing:
        model = OpenAIModel(model_of, base_url=refusing.url, api_key="sk-test", timeout_s=30)
        assert (await collect_stream(model, _request("q"))).error is None
        refused = (await collect_stream(model, _request("q"))).error
    assert isinstance(refused, ProviderError) and refused.status == 400
    assert len(refusing.overruns) == 1
