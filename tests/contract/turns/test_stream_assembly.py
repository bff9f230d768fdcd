"""Tests for assembling streamed deltas into one step's reply."""

import pytest

from mercury_nb.contract.turns.stream_assembly import (
    StreamAssembly,
    is_empty_reply,
    produced_nothing,
)
from mercury_nb.contract.turns.stream_ending import StreamEnding


def test_text_and_split_tool_call_arguments_are_joined() -> None:
    a = StreamAssembly().add_text("Hel").add_text("lo")
    a = a.add_tool_delta(0, "call_1", "create_file", '{"path": "a')
    a = a.add_tool_delta(0, None, None, '.py", "content": ""}')
    a = a.add_tool_delta(1, "call_2", "run_command", '{"command": "ls"}')
    reply = a.add_finish("tool_calls").reply()
    assert reply.text == "Hello"
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("call_1", "create_file", '{"path": "a.py", "content": ""}'),
        ("call_2", "run_command", '{"command": "ls"}'),
    ]
    assert reply.ending is StreamEnding.COMPLETE


def test_missing_call_id_gets_a_stable_one() -> None:
    reply = (
        StreamAssembly()
        .add_tool_delta(0, None, "list_dir", "{}")
        .add_finish("tool_calls")
        .reply(step=3)
    )
    assert reply.tool_calls[0].id == "call_3_0"


@pytest.mark.parametrize(
    ("assembly", "error", "expected"),
    [
        pytest.param(
            StreamAssembly().add_text("hi"),
            None,
            StreamEnding.INTERRUPTED,
            id="no-finish-chunk-is-interrupted",
        ),
        pytest.param(
            StreamAssembly().add_text("hi").add_finish("stop"),
            ConnectionError("x"),
            StreamEnding.INTERRUPTED,
            id="error-after-finish-is-interrupted",
        ),
        pytest.param(
            StreamAssembly().add_finish(None),
            None,
            StreamEnding.INTERRUPTED,
            id="finish-chunk-without-reason-is-interrupted",
        ),
        pytest.param(
            StreamAssembly().add_text("x").add_finish("length"),
            None,
            StreamEnding.TRUNCATED,
            id="length-is-truncated",
        ),
        pytest.param(
            StreamAssembly().add_text("x").add_finish("stop"),
            None,
            StreamEnding.COMPLETE,
            id="stop-is-complete",
        ),
    ],
)
def test_endings(assembly: StreamAssembly, error: Exception | None, expected: StreamEnding) -> None:
    reply = assembly.reply(error=error)
    assert reply.ending is expected
    assert (reply.error is not None) == (error is not None)


EMPTY_TABLE = [
    pytest.param(StreamAssembly().add_finish("stop"), True, False, id="nothing-then-stop"),
    pytest.param(StreamAssembly().add_text(" \n\t").add_finish("stop"), True, False,
                 id="whitespace-then-stop"),
    pytest.param(StreamAssembly().add_text("4").add_finish("stop"), False, False, id="answer"),
    pytest.param(StreamAssembly().add_tool_delta(0, "c", "list_dir", "{}")
                 .add_finish("tool_calls"), False, False, id="tool-call-no-text"),
    pytest.param(StreamAssembly().add_finish(None), False, True, id="no-finish-reason"),
    pytest.param(StreamAssembly(), False, True, id="no-chunk-at-all"),
    pytest.param(StreamAssembly().add_text("The "), False, False, id="cut-after-text"),
    pytest.param(StreamAssembly().add_finish("length"), False, True, id="empty-truncated"),
]  # fmt: skip


@pytest.mark.parametrize(("assembly", "empty", "nothing"), EMPTY_TABLE)
def test_empty_replies_and_streams_that_produced_nothing(
    assembly: StreamAssembly, empty: bool, nothing: bool
) -> None:
    reply = assembly.reply()
    assert is_empty_reply(reply) is empty
    assert produced_nothing(reply) is nothing
