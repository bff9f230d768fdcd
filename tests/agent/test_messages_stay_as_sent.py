"""A message never changes once it is in the conversation: compaction, summaries, resumed cut
replies and forced rounds replace or add messages, never edit one in place. The request body's
encoder, the token tally and the ledger's checkpoints all rely on it (each keeps what it made
of a message by the message's identity), so these tasks check it at every request."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.testing import Turn, call
from mercury_nb.transport.protocol import ModelRequest
from tests.agent.test_recovery_memory import (
    _summary_turn,
    base_tokens,
    cfg,
    reads,
    write_files,
)


class Watch:
    """Each message's JSON when a request first carried it; every later request (and the end
    of the task) must find the same object with the same JSON."""

    def __init__(self) -> None:
        self.seen: dict[int, tuple[Any, str]] = {}
        self.changed: list[str] = []

    def look(self, messages: Any) -> None:
        for message in messages:
            now = json.dumps(message, sort_keys=True)
            kept = self.seen.setdefault(id(message), (message, now))  # held: ids stay theirs
            if kept[1] != now:
                self.changed.append(f"{kept[1][:80]} -> {now[:80]}")

    def again(self) -> None:
        self.look([message for message, _ in self.seen.values()])

    def turn(self, step: Turn | Callable[[ModelRequest], Turn]) -> Callable[..., Turn]:
        def watched(request: ModelRequest) -> Turn:
            self.look(request.messages)
            return step(request) if callable(step) else step
        return watched


def _compaction(tmp_path: Path) -> tuple[MercuryConfig, list[Any]]:
    names = write_files(tmp_path, [60_000] * 3)
    return (cfg(tmp_path, context_window=40_000, max_output_tokens=4096,
                compaction_keep_recent=2),
            [*reads(names), Turn(text="Three files of fox rows.")])


def _summary(tmp_path: Path) -> tuple[MercuryConfig, list[Any]]:
    names = write_files(tmp_path, [8_000] * 4)
    window = 2 * 1024 + base_tokens(tmp_path) + 7_000
    return (cfg(tmp_path, context_window=window, max_output_tokens=1024,
                compaction_keep_recent=2),
            [*reads(names), _summary_turn, Turn(text="Fox rows, four files.")])


def _cut_reply(tmp_path: Path) -> tuple[MercuryConfig, list[Any]]:
    names = write_files(tmp_path, [500])
    return (cfg(tmp_path), [*reads(names), Turn(text="The data file holds fox ro",
                                                finish_reason="length"),
                            Turn(text="ws, 500 characters of them.")])


def _forced_round(tmp_path: Path) -> tuple[MercuryConfig, list[Any]]:
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (tmp_path / "test_calc.py").write_text("from calc import add\n\n\n"
                                           "def test_add():\n    assert add(2, 2) == 4\n")
    fix = call("edit_file", path="calc.py", old_text="return a - b",
                new_text="return a + b")
    check = call("run_command", command="python -m pytest -q test_calc.py")
    return (MercuryConfig(workdir=tmp_path, retry_base_s=0.0, permissions="auto"),
            [Turn(tool_calls=(fix,)), Turn(text="Fixed add."),  # no check yet: a forced round
             Turn(tool_calls=(check,)), Turn(text="Fixed add; the check passed.")])


@pytest.mark.parametrize("scenario", [_compaction, _summary, _cut_reply, _forced_round])
async def test_no_message_changes_once_it_is_in_the_conversation(
    tmp_path: Path, scripted_model: Any, scenario: Callable[..., Any]
) -> None:
    config, script = scenario(tmp_path)
    watch = Watch()
    model = scripted_model([watch.turn(step) for step in script])
    outcome = await run_new_session("Fix add in calc.py." if scenario is _forced_round
                                    else "What is in the data files?", config, model=model)

    assert outcome.status == "completed", outcome.banner
    assert len(model.requests) == len(script)  # every scripted turn was asked for
    watch.again()
    assert watch.changed == []
    assert len(watch.seen) > len(script)


def test_the_watch_sees_a_message_edited_in_place() -> None:
    watch = Watch()
    messages = [{"role": "user", "content": "a"}]
    watch.look(messages)
    messages[0]["content"] = "b"
    watch.again()
    assert watch.changed == ['{"content": "a", "role": "user"} -> {"content": "b", "role": "user"}']
