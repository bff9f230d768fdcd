"""A step's checkpoint serializes only what is new in the conversation and the tool log."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mercury_nb.ledger.checkpoint_json import CheckpointJson

SECRET = "sk-checkpoint-json-secret-0042"


def checkpoint(messages: list[dict[str, Any]], steps: int) -> dict[str, Any]:
    log = [{"seq": n, "summary": f"read f{n}.txt"} for n in range(1, steps + 1)]
    return {"task": f"use {SECRET}", "steps_total": steps, "messages": messages,
            "tool_log": log}


def test_each_message_and_entry_is_serialized_once(monkeypatch: pytest.MonkeyPatch) -> None:
    writer = CheckpointJson((SECRET,))
    pieces: list[Any] = []
    real = CheckpointJson._piece
    monkeypatch.setattr(CheckpointJson, "_piece",
                        lambda self, item: pieces.append(item) or real(self, item))
    messages: list[dict[str, Any]] = []
    per_step = []
    for step in range(1, 41):
        messages += [{"role": "assistant", "content": f"step {step} {SECRET}"},
                     {"role": "tool", "content": f"file {step}"}]
        before = len(pieces)
        data = checkpoint(list(messages), step)
        text = writer.dumps(data)
        per_step.append(len(pieces) - before)
        assert SECRET not in text and text.isascii()
        assert json.loads(text)["messages"][-1] == messages[-1]
        assert len(json.loads(text)["tool_log"]) == step
    assert per_step == [3] * 40  # two messages and one tool-log entry, however long the task
    compacted = [{"role": "user", "content": "summary"}, *messages[-2:]]  # a new list, new head
    before = len(pieces)
    assert json.loads(writer.dumps(checkpoint(compacted, 40)))["messages"][0]["content"] == \
        "summary"
    assert len(pieces) - before == 1  # only the replaced message is serialized anew
