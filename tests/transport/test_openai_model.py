"""The openai-SDK model's own details on real HTTP: the request it sends, error wording,
closing a stream the consumer abandons. (Endings and errors shared with the litellm model
are in test_stream_endings_both.py.)"""

from __future__ import annotations

import json
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from mercury_nb.testing import HttpError, LoopbackServer, Turn, collect_stream
from mercury_nb.transport.openai_model import OpenAIModel, error_message
from mercury_nb.transport.protocol import ModelRequest, TextChunk

MakeServer = Callable[..., LoopbackServer]
REQUEST = ModelRequest(messages=({"role": "user", "content": "build it"},), max_tokens=1234)
TOOLS = (
    {"type": "function", "function": {"name": "create_file", "parameters": {"type": "object"}}},
)


async def test_request_shape(loopback_server: MakeServer) -> None:
    server = loopback_server([Turn("one"), Turn("two")])
    plain_model = OpenAIModel("openai/m", "m", server.url, None, 30.0)
    await collect_stream(plain_model, REQUEST)
    forced = ModelRequest(messages=REQUEST.messages, tools=TOOLS, tool_choice="required",
                          max_tokens=99)
    openai_model = OpenAIModel("gpt-x", "gpt-x", server.url, "sk-k", 30.0,
                               max_tokens_field="max_completion_tokens")
    await collect_stream(openai_model, forced)
    plain, tooled = server.requests
    assert plain == {"model": "m", "messages": [{"role": "user", "content": "build it"}],
                     "max_tokens": 1234, "stream": True,
                     "stream_options": {"include_usage": True}}
    assert tooled["max_completion_tokens"] == 99 and "max_tokens" not in tooled
    assert (tooled["tools"], tooled["tool_choice"]) == (list(TOOLS), "required")
    headers = [{k.lower(): v for k, v in sent.items()} for _, sent in server.posts]
    assert [h["content-type"] for h in headers] == ["application/json"] * 2
    assert [h["authorization"] for h in headers] == ["Bearer not-needed", "Bearer sk-k"]
    assert [f"Bearer {m.bearer_token}" for m in (plain_model, openai_model)] == [
        h["authorization"] for h in headers]  # the token it names is the one sent


async def test_the_parameters_are_not_transformed_per_request(
    loopback_server: MakeServer,
) -> None:
    """The SDK's parameter transform walks every message of the conversation on every
    request (quadratic over a task): each message is read once, to serialize it, and the
    body is posted through the SDK's raw path instead."""
    walked: list[object] = []

    class Message(dict[str, Any]):
        """A message that notes every walk over its items (json's and the SDK's alike)."""

        def items(self) -> Any:
            walked.append(self["content"])
            return super().items()

    conversation = tuple(Message(role="user" if n % 2 else "assistant", content=f"turn {n}")
                         for n in range(200))
    server = loopback_server([Turn("ok"), Turn("again")])
    model = OpenAIModel("openai/m", "m", server.url)
    got = await collect_stream(model, ModelRequest(conversation, tools=TOOLS))
    assert got.reply.text == "ok"
    assert server.requests[0]["messages"] == list(conversation)
    assert sorted(walked) == sorted(m["content"] for m in conversation)  # each one once
    longer = (*conversation, {"role": "user", "content": "and now?"})
    again = await collect_stream(model, ModelRequest(longer, tools=TOOLS))
    assert again.reply.text == "again"
    assert server.requests[1]["messages"] == list(longer)
    assert len(walked) == len(conversation)  # the next step walks none of them again


async def test_messages_sent_are_not_modified(loopback_server: MakeServer) -> None:
    messages = ({"role": "user", "content": [{"type": "text", "text": "hi"}]},)
    before = json.dumps(messages)
    server = loopback_server([Turn("ok")])
    await collect_stream(OpenAIModel("openai/m", "m", server.url), ModelRequest(messages))
    assert json.dumps(messages) == before


async def test_the_providers_words_not_the_sdks_wrapping(loopback_server: MakeServer) -> None:
    server = loopback_server([Turn(fault=HttpError(400, message="max_tokens is too large"))])
    got = await collect_stream(OpenAIModel("openai/m", "m", server.url), REQUEST)
    assert got.error is not None
    assert got.error.message == "max_tokens is too large"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        pytest.param(SimpleNamespace(body={"message": "bad model"}, message="Error code: 400"),
                     "bad model", id="body-message"),
        pytest.param(SimpleNamespace(body={"error": {"message": "nested"}}), "nested",
                     id="nested-error"),
        pytest.param(SimpleNamespace(body="plain text body"), "plain text body", id="text-body"),
        pytest.param(SimpleNamespace(body=None, message="Connection error."),
                     "Connection error.", id="no-body"),
    ],
)  # fmt: skip
def test_error_message(error: object, expected: str) -> None:
    assert error_message(error) == expected  # type: ignore[arg-type]


async def test_consumer_stopping_early_closes_the_stream(loopback_server: MakeServer) -> None:
    server = loopback_server([Turn("a" * 64, chunk_size=4), Turn("next")])
    model = OpenAIModel("openai/m", "m", server.url)
    stream = model.stream(REQUEST)
    first = await stream.__anext__()
    await stream.aclose()  # type: ignore[attr-defined]
    assert first == TextChunk("aaaa")
    got = await collect_stream(model, REQUEST)  # the client is still usable afterwards
    assert got.reply.text == "next"
