"""Checkpoints: JSON-ready, secret-free, and restoring the session they were taken from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mercury_nb.agent.checkpoint import (
    restore_router_state,
    restore_session,
    restore_snapshot,
    restored_usage,
    session_checkpoint,
)
from mercury_nb.agent.events import AgentEvent, TurnEnded
from mercury_nb.agent.session import TaskSession, ToolLogEntry
from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.runs.settings import plan
from mercury_nb.testing import Turn, call


async def test_checkpoint_round_trip(tmp_path: Path, scripted_model) -> None:
    model = scripted_model(
        [Turn(tool_calls=(call("write_file", path=f"f{i}.txt", content="x\n"),)) for i in range(4)]
    )
    config = MercuryConfig(workdir=tmp_path, max_steps=2, max_auto_continuations=1,
                           api_key="sk-checkpoint-secret-77")
    events: list[AgentEvent] = []
    outcome = await run_new_session("write some files", config, model=model, on_event=events.append)
    assert outcome.status == "paused"
    turns = [e for e in events if isinstance(e, TurnEnded)]
    assert [t.decision for t in turns] == ["next-turn", "finish"]
    data = turns[-1].checkpoint()
    raw = json.dumps(data)
    assert "sk-checkpoint-secret-77" not in raw
    data = json.loads(raw)

    restored_config = plan({}, checkpoint=data, current=MercuryConfig(api_key="sk-again"))
    session = restore_session(data, restored_config)
    assert session.task_id == outcome.task_id
    assert session.steps_total == outcome.steps == 4
    assert [e.name for e in session.tool_log] == ["write_file"] * 4
    assert session.messages[1]["content"] == "write some files"
    assert restored_config.api_key is not None
    assert restored_config.workdir == tmp_path
    assert restore_router_state(data, session.task, restored_config).budget.continuations == 1
    assert restore_snapshot(data).root == str(tmp_path.resolve())


async def test_what_the_task_read_survives_a_checkpoint(tmp_path: Path, scripted_model) -> None:
    (tmp_path / "README.md").write_text("# calc\n")
    (tmp_path / "notes.md").write_text("notes\n")
    model = scripted_model([Turn(tool_calls=(call("read_file", path="notes.md"),)),
                            Turn(text="README.md and notes.md say little.")])
    events: list[AgentEvent] = []
    config = MercuryConfig(workdir=tmp_path, mode="chat")
    await run_new_session("Summarise README.md", config, model=model, on_event=events.append)
    data = json.loads(json.dumps([e for e in events if isinstance(e, TurnEnded)][-1].checkpoint()))

    session = restore_session(data, plan({}, checkpoint=data))
    assert session.grounded_paths == ("README.md",)
    assert session.tool_log[0].read_paths == ("notes.md",)
    assert session.read_paths == {"README.md", "notes.md"}


@pytest.mark.parametrize(
    ("stored", "usage"),
    [
        pytest.param({"m": [120, 30]}, {"m": (120, 30)}, id="kept"),
        pytest.param(None, {}, id="a-checkpoint-from-before-usage-was-kept"),
        pytest.param({"m": [1], "n": ["a", 2], "o": [-1, 2], "p": [3, 4]}, {"p": (3, 4)},
                     id="unreadable-entries-are-dropped"),
        pytest.param(["m", 1], {}, id="not-a-mapping"),
    ],
)
def test_restored_usage(stored: object, usage: dict[str, tuple[int, int]]) -> None:
    assert restored_usage(stored) == usage


def test_each_tool_log_entry_is_copied_once_over_the_task() -> None:
    """A checkpoint per step must not copy the whole tool log again: an entry already in a
    checkpoint is the same data in every later one, and a replaced log is copied anew."""
    session = TaskSession.start("t", MercuryConfig(), "task-1")

    def entry(seq: int) -> ToolLogEntry:
        return ToolLogEntry(seq=seq, step=seq, name="read_file", ok=True, mutating=False,
                            summary=f"read {seq}", result_head="")

    session.tool_log.extend(entry(n) for n in range(1, 4))
    first = session_checkpoint(session, None)["tool_log"]
    session.tool_log.append(entry(4))
    second = session_checkpoint(session, None)["tool_log"]
    assert [e["seq"] for e in second] == [1, 2, 3, 4]
    assert all(a is b for a, b in zip(first, second, strict=False))  # made once, not per step
    session.tool_log = [entry(n) for n in range(7, 11)]  # a restore replaced the log
    assert [e["seq"] for e in session_checkpoint(session, None)["tool_log"]] == [7, 8, 9, 10]


def test_the_config_is_dumped_once_per_config_object(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dumps = []
    real = MercuryConfig.model_dump

    def counting(self: MercuryConfig, **kw: object) -> dict[str, object]:
        dumps.append(self)
        return real(self, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(MercuryConfig, "model_dump", counting)
    session = TaskSession.start("a task", MercuryConfig(workdir=tmp_path, api_key="sk-x-1234"),
                                "t1")
    taken = [session_checkpoint(session, None) for _ in range(5)]
    assert len(dumps) == 1
    assert all(data["config"]["max_steps"] == session.config.max_steps for data in taken)
    assert "api_key" not in taken[0]["config"]
    session.config = session.config.model_copy(update={"max_steps": 7})
    assert session_checkpoint(session, None)["config"]["max_steps"] == 7
    assert len(dumps) == 2
