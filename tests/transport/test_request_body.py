"""The request body's JSON: the same bytes as serializing it whole, each message of the
conversation serialized once however many steps resend it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mercury_nb.transport.request_body import BodyEncoder, encode_json


def _body(messages: list[dict[str, Any]], **rest: Any) -> dict[str, Any]:
    return {"model": "m", "messages": tuple(messages), "stream": True, **rest}


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(_body([]), id="no-messages"),
        pytest.param(_body([{"role": "user", "content": "héllo ☃"}], max_tokens=9),
                     id="non-ascii"),
        pytest.param(_body([{"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "read_file", "arguments": '{"path": "a"}'}}]}],
            tools=({"type": "function", "function": {"name": "read_file"}},),
            tool_choice="auto"), id="tool-calls"),
        pytest.param({"messages": ({"role": "user", "content": "x"},)}, id="messages-only"),
    ],
)  # fmt: skip
def test_the_same_json_as_the_whole_body(body: dict[str, Any]) -> None:
    assert json.loads(BodyEncoder().encode(body)) == json.loads(encode_json(body))


def test_not_json_fails_as_the_whole_body_would() -> None:
    with pytest.raises(ValueError):
        BodyEncoder().encode(_body([{"role": "user", "content": float("nan")}]))


@pytest.mark.parametrize("steps", [10, 100, 1000])
def test_each_step_serializes_only_its_new_messages(steps: int) -> None:
    encoder = BodyEncoder()
    conversation: list[dict[str, Any]] = [{"role": "user", "content": "read them all"}]
    per_step = []
    for step in range(steps):
        conversation += [{"role": "assistant", "content": f"step {step}"},
                         {"role": "tool", "tool_call_id": f"c{step}", "content": "x" * 50}]
        before = encoder.serialized
        sent = json.loads(encoder.encode(_body(conversation)))
        per_step.append(encoder.serialized - before)
        assert sent["messages"] == conversation
    assert per_step[0] == 3 and set(per_step[1:]) == {2}, "flat: only the new messages"


def test_a_replaced_message_is_serialized_anew() -> None:
    """Compaction replaces messages (a new dict, maybe at the id of a freed one): the body
    carries the replacement, never a stale piece."""
    encoder = BodyEncoder()
    conversation = [{"role": "user", "content": "task"}, {"role": "tool", "content": "x" * 99}]
    encoder.encode(_body(conversation))
    conversation[1] = {"role": "tool", "content": "[compacted]"}
    sent = json.loads(encoder.encode(_body(conversation)))
    assert sent["messages"][1]["content"] == "[compacted]"
    assert encoder.serialized == 3


def test_a_step_walks_only_its_new_messages_in_python() -> None:
    """The shared start of the conversation is not walked message by message each step."""
    encoder = BodyEncoder()
    conversation: list[dict[str, Any]] = [{"role": "user", "content": "task"}]
    walked = []
    for step in range(200):
        conversation += [{"role": "assistant", "content": f"step {step}"},
                         {"role": "tool", "tool_call_id": f"c{step}", "content": "x"}]
        before = encoder.visited
        assert json.loads(encoder.encode(_body(conversation)))["messages"] == conversation
        walked.append(encoder.visited - before)
    assert walked[0] == 3 and set(walked[1:]) == {2}


def test_a_shorter_or_changed_conversation_after_a_long_one_is_sent_as_it_is() -> None:
    encoder = BodyEncoder()
    conversation = [{"role": "user", "content": str(n)} for n in range(5)]
    encoder.encode(_body(conversation))
    for sent in (conversation[:2], [conversation[0], {"role": "user", "content": "new"}],
                 conversation, []):
        assert json.loads(encoder.encode(_body(sent)))["messages"] == sent
    # 5, then "new", then 4 again: only the latest body's pieces are kept
    assert encoder.serialized == 10
