"""The per-step prompt estimate measures only new messages: the count of messages measured
before each request does not grow with the conversation, and the tally's sum is the estimate."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from mercury_nb.agent.task import run_new_session
from mercury_nb.agent.token_tally import TokenTally
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.recovery import memory_governor
from mercury_nb.contract.recovery.memory_governor import estimate_tokens
from mercury_nb.testing import Turn, call
from mercury_nb.transport.protocol import ModelRequest

STEPS = 40  # the conversation passes the tally's slack, so its pruning runs


async def test_messages_measured_per_step_do_not_grow_with_the_conversation(
    tmp_path: Path, scripted_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    measured = [0]
    real = memory_governor.message_tokens

    def counting(message: Any) -> int:
        measured[0] += 1
        return real(message)

    monkeypatch.setattr(memory_governor, "message_tokens", counting)
    for index in range(STEPS):
        (tmp_path / f"f{index}.txt").write_text(f"file {index}: the quick brown fox\n")
    at_request: list[int] = []
    sent: list[int] = []

    def read(index: int) -> Any:
        def turn(request: ModelRequest) -> Turn:
            at_request.append(measured[0])
            sent.append(len(request.messages))
            return Turn(tool_calls=(call("read_file", path=f"f{index}.txt"),))
        return turn

    def answer(request: ModelRequest) -> Turn:
        at_request.append(measured[0])
        sent.append(len(request.messages))
        return Turn(text="Forty fox files.")

    model = scripted_model([*(read(i) for i in range(STEPS)), answer])
    config = MercuryConfig(workdir=tmp_path, retry_base_s=0.0, context_window=200_000)
    outcome = await run_new_session("What do the f files say?", config, model=model)

    assert outcome.status == "completed", outcome.banner
    assert sent[-1] - sent[1] == 2 * (STEPS - 1)  # the conversation grew by two a step
    per_step = [after - before for before, after in pairwise(at_request[1:])]
    assert per_step and max(per_step) == min(per_step), per_step  # constant, not growing
    assert max(per_step) <= 2, per_step  # the step's assistant message and tool result


def _messages() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are mercury."},
        {"role": "user", "content": "Read the files."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": "x" * 900},
        {"role": "user", "content": [{"type": "text", "text": "see"},
                                     {"type": "image_url", "image_url": {"url": "data:"}}]},
    ]


def _swap_message(messages: list[dict[str, Any]]) -> None:
    messages[3] = {**messages[3], "content": "z" * 5000}


def _drop_middle(messages: list[dict[str, Any]]) -> None:
    del messages[2:4]


def _append(messages: list[dict[str, Any]]) -> None:
    messages.append({"role": "assistant", "content": "done " * 40})


@pytest.mark.parametrize(
    ("change", "remeasured"),
    [(_swap_message, 1), (_drop_middle, 0), (_append, 1)],
)
def test_the_tally_equals_the_estimate_after_each_kind_of_change(
    change: Any, remeasured: int
) -> None:
    messages = _messages()
    tally = TokenTally()
    assert tally.tokens(messages) == estimate_tokens(messages)
    assert tally.measured == len(messages)
    change(messages)
    assert tally.tokens(messages) == estimate_tokens(messages)
    assert tally.measured == len(_messages()) + remeasured


def test_asking_for_a_prefix_does_not_forget_the_rest_of_a_long_conversation() -> None:
    messages = _messages()
    tally = TokenTally()
    for index in range(150):  # past the tally's slack: its pruning runs
        messages.append({"role": "tool", "tool_call_id": f"c{index}", "content": "r" * index})
        assert tally.tokens(messages[:2]) == estimate_tokens(messages[:2])
        assert tally.tokens(messages) == estimate_tokens(messages)
    assert tally.measured == len(messages)  # each message measured once


def test_messages_left_out_of_the_list_are_let_go() -> None:
    messages = [{"role": "tool", "content": "r" * index} for index in range(300)]
    tally = TokenTally()
    tally.tokens(messages)
    kept = messages[-5:]
    for _ in range(10):
        tally.tokens(kept)
    assert tally.held == len(kept)  # the others' texts can be freed


def test_a_step_walks_only_its_new_messages_in_python() -> None:
    """Each step asks for the conversation, its protected start and the system messages; the
    messages looked at one by one are the step's new ones, not the whole conversation."""
    messages = _messages()
    tally = TokenTally()
    walked = []
    for index in range(200):
        before = tally.visited
        messages.append({"role": "tool", "tool_call_id": f"c{index}", "content": "r" * index})
        assert tally.tokens(messages[:2]) == estimate_tokens(messages[:2])
        assert tally.tokens(messages) == estimate_tokens(messages)
        assert tally.tokens([messages[0]]) == estimate_tokens([messages[0]])
        walked.append(tally.visited - before)
    assert set(walked[1:]) == {1}, walked[:5]
    assert tally.prunes == 0  # nothing to drop: no step walks every entry to drop none


def test_a_list_neither_a_start_nor_an_extension_is_summed_anew_and_right() -> None:
    messages = _messages()
    tally = TokenTally()
    tally.tokens(messages)
    for other in ([messages[0], messages[3]], messages[1:], [], messages[:3] + messages[4:]):
        assert tally.tokens(other) == estimate_tokens(other)
    assert tally.tokens(messages) == estimate_tokens(messages)
    assert tally.measured == len(messages)  # never measured twice


class _Counted(dict[str, Any]):
    """A message that counts how often its fields are read."""

    reads = 0

    def get(self, key: str, default: Any = None) -> Any:
        _Counted.reads += 1
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        _Counted.reads += 1
        return super().__getitem__(key)


def test_a_step_reads_only_its_new_messages_fields() -> None:
    """The shared start of the lists a step asks about is compared by message identity: no
    earlier message's content or tool calls is read again, however long the conversation."""
    messages: list[dict[str, Any]] = [_Counted(m) for m in _messages()]
    tally = TokenTally()
    read = []
    for index in range(120):
        messages.append(_Counted(role="tool", tool_call_id=f"c{index}", content="r" * index))
        lists = (messages[:2], messages, [messages[0]])
        before = _Counted.reads
        sums = [tally.tokens(listed) for listed in lists]
        read.append(_Counted.reads - before)
        assert sums == [estimate_tokens(listed) for listed in lists]
    assert len(set(read[1:])) == 1, read[:3] + read[-3:]
