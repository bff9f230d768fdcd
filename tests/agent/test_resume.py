"""Resuming from a checkpoint: conversation, counters and the original start snapshot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mercury_nb.agent.checkpoint import config_of
from mercury_nb.agent.events import AgentEvent, TaskFinished, TaskStarted, TurnEnded
from mercury_nb.agent.resume import resume_task
from mercury_nb.agent.task import run_task
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.testing import Turn, call


def last_checkpoint(events: list[AgentEvent]) -> dict[str, Any]:
    """The last checkpoint, through JSON as the ledger stores it."""
    turns = [event for event in events if isinstance(event, TurnEnded)]
    data: dict[str, Any] = json.loads(json.dumps(turns[-1].checkpoint()))
    return data


def write(path: str, content: str) -> Turn:
    return Turn(tool_calls=(call("write_file", path=path, content=content),))


async def test_the_change_summary_stays_relative_to_the_original_start(
    tmp_path: Path, scripted_model
) -> None:
    (tmp_path / "keep.txt").write_text("original\n")
    config = MercuryConfig(workdir=tmp_path, max_steps=2, max_auto_continuations=0)
    events: list[AgentEvent] = []
    first = await run_task("edit the notes", config, on_event=events.append, model=scripted_model(
        [write("keep.txt", "first pass\n"), write("scratch.txt", "temporary\n")]))
    assert first.status == "paused"
    assert {c.path for c in first.changes} == {"keep.txt", "scratch.txt"}

    data = last_checkpoint(events)
    resumed_events: list[AgentEvent] = []
    outcome = await resume_task(data, config_of(data, max_steps=5), on_event=resumed_events.append,
                                model=scripted_model([
                                    write("keep.txt", "final\n"),
                                    Turn(tool_calls=(call("delete_file", path="scratch.txt"),)),
                                    Turn(text="Notes edited."),
                                ]))
    assert outcome.status == "completed", outcome.banner
    assert outcome.task_id == first.task_id
    # scratch.txt came and went after the start: not a change; keep.txt against "original"
    assert [(c.path, c.kind, c.added, c.removed) for c in outcome.changes] == [
        ("keep.txt", "modified", 1, 1)]
    assert "-original" in outcome.changes[0].preview
    assert outcome.steps == 5
    started = [e for e in resumed_events if isinstance(e, TaskStarted)]
    assert [e.task_id for e in started] == [first.task_id]


async def test_counters_carry_over_and_the_budget_is_fresh(tmp_path: Path, scripted_model) -> None:
    config = MercuryConfig(workdir=tmp_path, max_steps=1, max_auto_continuations=1)
    events: list[AgentEvent] = []
    first = await run_task("write files", config, on_event=events.append,
                           model=scripted_model([write("a.txt", "a\n"), write("b.txt", "b\n")]))
    assert first.status == "paused"
    data = last_checkpoint(events)
    assert (data["continuations"], data["steps_total"]) == (1, 2)

    model = scripted_model([write("c.txt", "c\n")])
    outcome = await resume_task(data, config_of(data), model=model)
    # one fresh budget of one step; the automatic continuation was already used: pause again
    assert outcome.status == "paused"
    assert outcome.steps == 3
    assert len(model.requests) == 1
    sent = model.requests[0].messages
    assert sent[: len(data["messages"])] == tuple(data["messages"])
    assert sent[-1] == {"role": "user", "content": "continue"}


async def test_a_model_that_cannot_be_set_up_fails_honestly(tmp_path: Path,
                                                            scripted_model) -> None:
    config = MercuryConfig(workdir=tmp_path, max_steps=1, max_auto_continuations=0)
    events: list[AgentEvent] = []
    await run_task("write", config, on_event=events.append,
                   model=scripted_model([write("a.txt", "a\n")]))
    data = last_checkpoint(events)
    finished: list[AgentEvent] = []
    outcome = await resume_task(data, config_of(data, model="scripted/not-registered"),
                                on_event=finished.append)
    assert outcome.status == "failed"
    assert outcome.banner and "could not be set up" in (outcome.blocker or "")
    assert [c.path for c in outcome.changes] == ["a.txt"]
    assert [type(e) for e in finished] == [TaskFinished]
