"""The loopback server, spoken to by the raw openai client and by httpx, fault by fault."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import openai
import pytest

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
)
from mercury_nb.transport.protocol import ModelRequest

MakeServer = Callable[..., LoopbackServer]
MESSAGES = [{"role": "user", "content": "hello"}]


def _client(server: LoopbackServer) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=server.url, api_key="sk-test", max_retries=0)


def _sse_lines(server: LoopbackServer, model: str = "m", **extra: Any) -> list[str]:
    body = {"model": model, "stream": True, "messages": MESSAGES, **extra}
    with httpx.stream("POST", server.url + "/chat/completions", json=body) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        return [line for line in response.iter_lines() if line]


def _payloads(lines: list[str]) -> list[dict[str, Any]]:
    return [json.loads(line.removeprefix("data: ")) for line in lines if line != "data: [DONE]"]


async def test_openai_client_streams_text_and_tool_calls(loopback_server: MakeServer) -> None:
    turn = Turn(
        "Let me write it.",
        tool_calls=(call("create_file", path="a.py", content="x = 1\n" * 5),),
        chunk_size=6,
    )
    server = loopback_server([turn])
    stream = await _client(server).chat.completions.create(
        model="m",
        messages=MESSAGES,
        stream=True,  # type: ignore[arg-type]
    )
    text, arguments, finish = "", "", None
    heads = []
    async for chunk in stream:
        choice = chunk.choices[0]
        text += choice.delta.content or ""
        for piece in choice.delta.tool_calls or []:
            if piece.id is not None:
                heads.append((piece.index, piece.id, piece.type, piece.function.name))
            arguments += piece.function.arguments or ""
        finish = choice.finish_reason or finish
    assert text == "Let me write it."
    assert heads == [(0, "call_0_0", "function", "create_file")]
    assert json.loads(arguments) == {"path": "a.py", "content": "x = 1\n" * 5}
    assert finish == "tool_calls"


async def test_openai_client_non_streamed_reply(loopback_server: MakeServer) -> None:
    server = loopback_server([Turn("fine", tool_calls=(ToolCallSpec("t", "{bad json", id="c1"),))])
    reply = await _client(server).chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
    message = reply.choices[0].message
    assert (message.content, reply.choices[0].finish_reason) == ("fine", "tool_calls")
    assert message.tool_calls is not None
    assert message.tool_calls[0].function.arguments == "{bad json"  # type: ignore[union-attr]


def test_sse_frames_the_openai_way(loopback_server: MakeServer) -> None:
    server = loopback_server([Turn("abcd", chunk_size=2)])
    lines = _sse_lines(server)
    assert lines[-1] == "data: [DONE]"
    payloads = _payloads(lines)
    assert {p["object"] for p in payloads} == {"chat.completion.chunk"}
    deltas = [p["choices"][0]["delta"] for p in payloads]
    assert deltas == [
        {"role": "assistant", "content": ""},
        {"content": "ab"},
        {"content": "cd"},
        {},
    ]
    assert [p["choices"][0]["finish_reason"] for p in payloads] == [None, None, None, "stop"]


def test_usage_chunk_only_when_asked(loopback_server: MakeServer) -> None:
    server = loopback_server([Turn("a"), Turn("b")])
    asked = _payloads(_sse_lines(server, stream_options={"include_usage": True}))
    plain = _payloads(_sse_lines(server))
    assert asked[-1]["choices"] == [] and asked[-1]["usage"]["total_tokens"] > 0
    assert all("usage" not in p for p in plain)


@pytest.mark.parametrize(
    ("turn", "finish_reasons", "done"),
    [
        pytest.param(Turn("x", fault=NoFinish()), [], False, id="no-finish-no-done"),
        pytest.param(Turn("x", fault=NoFinish(send_done=True)), [], True, id="no-finish-with-done"),
        pytest.param(Turn("x", finish_reason=None), [], True, id="finish-none"),
        pytest.param(Turn("x", finish_reason="length"), ["length"], True, id="length"),
    ],
)
def test_endings_without_a_clean_stop(
    loopback_server: MakeServer, turn: Turn, finish_reasons: list[str], done: bool
) -> None:
    lines = _sse_lines(loopback_server([turn]))
    reasons = [p["choices"][0]["finish_reason"] for p in _payloads(lines)]
    assert [r for r in reasons if r is not None] == finish_reasons
    assert ("data: [DONE]" in lines) is done


def test_drop_mid_stream_breaks_the_body(loopback_server: MakeServer) -> None:
    server = loopback_server([Turn("abcdef", chunk_size=2, fault=DropMidStream(2))])
    seen: list[str] = []
    body = {"model": "m", "stream": True, "messages": MESSAGES}
    with pytest.raises(httpx.RemoteProtocolError):  # noqa: SIM117 - the raise comes mid-iteration
        with httpx.stream("POST", server.url + "/chat/completions", json=body) as response:
            seen.extend(line for line in response.iter_lines() if line)
    assert [p["choices"][0]["delta"].get("content") for p in _payloads(seen)] == ["", "ab", "cd"]


def test_malformed_chunk_is_a_non_json_data_line(loopback_server: MakeServer) -> None:
    lines = _sse_lines(loopback_server([Turn("abcd", chunk_size=2, fault=MalformedChunk(1))]))
    broken = [line for line in lines if line.startswith("data: {") and not _is_json(line[6:])]
    assert len(broken) == 1
    assert lines.index(broken[0]) == 2  # after the role chunk and one content chunk


def _text(lines: list[str]) -> str:
    return "".join(p["choices"][0]["delta"].get("content") or "" for p in _payloads(lines))


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize(
    ("fault", "retry_after", "error_type"),
    [
        pytest.param(HttpError(429, retry_after=2), "2", "rate_limit_error", id="429"),
        pytest.param(HttpError(429, retry_after=0.5), "0.5", "rate_limit_error", id="429-fraction"),
        pytest.param(HttpError(500), None, "server_error", id="500"),
        pytest.param(HttpError(503, retry_after=1), "1", "server_error", id="503"),
        pytest.param(HttpError(401, message="bad key"), None, "invalid_request_error", id="401"),
    ],
)
def test_http_errors(
    loopback_server: MakeServer, fault: HttpError, retry_after: str | None, error_type: str
) -> None:
    server = loopback_server([Turn("never", fault=fault)])
    response = httpx.post(server.url + "/chat/completions", json={"model": "m", "stream": True})
    assert response.status_code == fault.status
    assert response.headers.get("retry-after") == retry_after
    error = response.json()["error"]
    assert (error["message"], error["type"]) == (fault.message, error_type)


async def test_openai_client_sees_429_with_retry_after(loopback_server: MakeServer) -> None:
    server = loopback_server([Turn(fault=HttpError(429, retry_after=3, message="slow down"))])
    with pytest.raises(openai.RateLimitError) as caught:
        await _client(server).chat.completions.create(model="m", messages=MESSAGES, stream=True)  # type: ignore[arg-type]
    assert caught.value.response.headers["retry-after"] == "3"
    assert len(server.requests) == 1


def test_stall_then_carry_on(loopback_server: MakeServer) -> None:
    server = loopback_server([Turn("abcd", chunk_size=2, fault=Stall(0.3, after_chunks=1))])
    lines = _sse_lines(server)
    assert _text(lines) == "abcd"
    assert lines[-1] == "data: [DONE]"


def test_stop_cuts_a_long_stall() -> None:
    server = LoopbackServer([Turn("late", fault=Stall(600))]).start()
    url = server.url + "/chat/completions"
    outcome: list[BaseException | str] = []
    got_headers = threading.Event()

    def client() -> None:
        body = {"model": "m", "stream": True}
        try:
            with httpx.stream("POST", url, json=body, timeout=60) as response:
                got_headers.set()
                outcome.extend(line for line in response.iter_lines() if line)
        except httpx.HTTPError as error:
            outcome.append(error)

    worker = threading.Thread(target=client, daemon=True)
    worker.start()
    assert got_headers.wait(timeout=30)
    server.stop()
    worker.join(timeout=30)
    assert not worker.is_alive(), "stop() left the stalled response hanging"
    assert isinstance(outcome[-1], httpx.RemoteProtocolError)


def test_dict_script_is_keyed_by_model(loopback_server: MakeServer) -> None:
    server = loopback_server({"a": [Turn("from a"), Turn("a again")], "b": [Turn("from b")]})

    def text(model: str) -> str:
        return _text(_sse_lines(server, model=model))

    assert [text("a"), text("b"), text("a")] == ["from a", "from b", "a again"]
    assert [r["model"] for r in server.requests_for("a")] == ["a", "a"]
    assert len(server.request_times) == 3
    assert server.request_times == sorted(server.request_times)
    assert server.request_times[0] <= time.monotonic()


def test_callable_turn_gets_the_request(loopback_server: MakeServer) -> None:
    seen: list[ModelRequest] = []

    def answer(request: ModelRequest) -> Turn:
        seen.append(request)
        return Turn(f"{len(request.tools)} tool(s), choice {request.tool_choice}")

    server = loopback_server([answer])
    tools = [{"type": "function", "function": {"name": "write_file", "parameters": {}}}]
    lines = _sse_lines(server, tools=tools, tool_choice="required", max_tokens=99)
    assert _text(lines) == "1 tool(s), choice required"
    assert seen[0].messages == tuple(MESSAGES)
    assert seen[0].max_tokens == 99
    assert server.requests[0]["tools"] == tools


def test_over_asking_answers_400_and_fails_assert_complete() -> None:
    with LoopbackServer({"a": [Turn("one")]}) as server:
        assert httpx.post(server.url + "/chat/completions", json={"model": "a"}).status_code == 200
        response = httpx.post(server.url + "/chat/completions", json={"model": "a"})
        other = httpx.post(server.url + "/chat/completions", json={"model": "zzz"})
    assert (response.status_code, other.status_code) == (400, 400)
    assert "script exhausted" in response.json()["error"]["message"]
    with pytest.raises(AssertionError, match="2 request\\(s\\) beyond the script"):
        server.assert_complete()


def test_unused_turns_are_reported_per_model() -> None:
    server = LoopbackServer({"a": [Turn("used")], "b": [Turn("left over")]})
    with server:
        httpx.post(server.url + "/chat/completions", json={"model": "a"})
    assert server.remaining == 1
    with pytest.raises(AssertionError, match="1 scripted turn\\(s\\) unused for model 'b'"):
        server.assert_complete()


def test_a_failing_callable_turn_is_reported_not_printed(
    capfd: pytest.CaptureFixture[str],
) -> None:
    def broken(request: ModelRequest) -> Turn:
        raise RuntimeError("script bug")

    with LoopbackServer([broken, Turn("still serving")]) as server:
        failed = httpx.post(server.url + "/chat/completions", json={"model": "m"})
        served = httpx.post(server.url + "/chat/completions", json={"model": "m"})
    assert (failed.status_code, served.status_code) == (500, 200)
    assert "script bug" in failed.json()["error"]["message"]
    with pytest.raises(
        AssertionError, match="errors while serving: RuntimeError\\('script bug'\\)"
    ):
        server.assert_complete()
    assert capfd.readouterr().err == ""


def test_unknown_path_is_404(loopback_server: MakeServer) -> None:
    server = loopback_server([])
    assert httpx.post(server.url + "/completions", json={}).status_code == 404
    assert httpx.get(server.url + "/models").status_code == 404


def test_another_process_can_reach_it(loopback_server: MakeServer) -> None:
    server = loopback_server([Turn("to the other process")])
    code = (
        "import json, sys, urllib.request\n"
        "req = urllib.request.Request(sys.argv[1] + '/chat/completions',"
        " data=json.dumps({'model': 'm'}).encode(), headers={'Content-Type': 'application/json'})\n"
        "print(json.load(urllib.request.urlopen(req))['choices'][0]['message']['content'])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, server.url], capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip() == "to the other process", result.stderr
