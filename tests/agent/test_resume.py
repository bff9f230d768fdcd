"""Resuming from a checkpoint: conversation, counters and the original start snapshot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mercury_nb.agent.events import AgentEvent, TaskFinished, TaskStarted, TurnEnded
from mercury_nb.agent.resume import resume_task
from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.recovery.continuation import STEP_BUDGET_NUDGE
from mercury_nb.runs.settings import plan
from mercury_nb.testing import (
    HttpError,
    ScriptedModel,
    Turn,
    call,
    register_scripted_model,
    unregister_scripted_model,
)


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
    config = MercuryConfig(permissions="auto",
                           workdir=tmp_path, max_steps=2, max_auto_continuations=0)
    events: list[AgentEvent] = []
    first = await run_new_session(
        "edit the notes in keep.txt", config, on_event=events.append,
        model=scripted_model([write("keep.txt", "first pass\n"),
                              write("scratch.txt", "temporary\n")]))
    assert first.status == "paused"
    assert {c.path for c in first.changes} == {"keep.txt", "scratch.txt"}

    data = last_checkpoint(events)
    resumed_events: list[AgentEvent] = []
    outcome = await resume_task(data, plan({"max_steps": 5}, checkpoint=data),
                                on_event=resumed_events.append,
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
    config = MercuryConfig(permissions="auto",
                           workdir=tmp_path, max_steps=1, max_auto_continuations=1)
    events: list[AgentEvent] = []
    model = scripted_model([write("a.txt", "a\n"), write("b.txt", "b\n")])
    first = await run_new_session("write files", config, on_event=events.append, model=model)
    assert first.status == "paused"
    data = last_checkpoint(events)
    assert (data["continuations"], data["steps_total"]) == (1, 2)

    model = scripted_model([write("c.txt", "c\n")])
    outcome = await resume_task(data, plan({}, checkpoint=data), model=model)
    # one fresh budget of one step; the automatic continuation was already used: pause again
    assert outcome.status == "paused"
    assert outcome.steps == 3
    assert len(model.requests) == 1
    sent = model.requests[0].messages
    assert sent[: len(data["messages"])] == tuple(data["messages"])
    assert sent[-1]["role"] == "user" and sent[-1]["content"] != "continue"
    assert sent[-1]["content"].startswith(STEP_BUDGET_NUDGE)  # paused by its step budget


async def test_a_model_that_cannot_be_set_up_fails_honestly(tmp_path: Path,
                                                            scripted_model) -> None:
    config = MercuryConfig(permissions="auto",
                           workdir=tmp_path, max_steps=1, max_auto_continuations=0)
    events: list[AgentEvent] = []
    await run_new_session("write", config, on_event=events.append,
                          model=scripted_model([write("a.txt", "a\n")]))
    data = last_checkpoint(events)
    finished: list[AgentEvent] = []
    outcome = await resume_task(data, plan({"model": "scripted/not-registered"}, checkpoint=data),
                                on_event=finished.append)
    assert outcome.status == "failed"
    assert outcome.banner and "could not be set up" in (outcome.blocker or "")
    assert [c.path for c in outcome.changes] == ["a.txt"]
    assert [type(e) for e in finished] == [TaskFinished]


async def paused_checkpoint(tmp_path: Path, scripted_model, **changes: Any) -> dict[str, Any]:
    """The checkpoint of a task paused after one step (its budget spent), edited."""
    config = MercuryConfig(permissions="auto",
                           workdir=tmp_path, max_steps=1, max_auto_continuations=0)
    events: list[AgentEvent] = []
    first = await run_new_session("write a note in a.txt", config, on_event=events.append,
                                  model=scripted_model([write("a.txt", "a\n")]))
    assert first.status == "paused"
    data = last_checkpoint(events)
    data.update(changes)
    return data


async def test_a_resumed_task_halves_its_restored_output_cap_not_the_default(
    tmp_path: Path, scripted_model
) -> None:
    data = await paused_checkpoint(tmp_path, scripted_model, output_caps={"0": 8192})
    model = scripted_model([
        Turn(fault=HttpError(400, message="max_tokens is too large for this model")),
        Turn(text="Done."),
    ])
    # a large window: no per-reply bound of a small or unknown one gets in the way
    config = plan({"max_steps": 5, "context_window": 200_000}, checkpoint=data)
    outcome = await resume_task(data, config, model=model)
    assert outcome.status == "completed", outcome.banner
    assert [request.max_tokens for request in model.requests] == [8192, 4096]


async def test_a_resumed_task_keeps_its_checkpointed_provider(tmp_path: Path) -> None:
    first_model = register_scripted_model("resume-first", [Turn(text="never asked")])
    second_model = register_scripted_model("resume-second", [Turn(text="Done.")])
    try:
        chain = {"model": "scripted/resume-first", "fallbacks": ["scripted/resume-second"]}
        data = await paused_checkpoint(tmp_path, lambda turns: scripted_model_for(turns),
                                       provider_index=1)
        data["config"] = {**data["config"], **chain}
        outcome = await resume_task(data, plan({"max_steps": 5}, checkpoint=data))
        assert outcome.status == "completed", outcome.banner
        assert (len(first_model.requests), len(second_model.requests)) == (0, 1)
    finally:
        unregister_scripted_model("resume-first")
        unregister_scripted_model("resume-second")


def scripted_model_for(turns: list[Turn]) -> ScriptedModel:
    return ScriptedModel(turns, name="scripted/resume-setup")


async def test_a_file_first_changed_after_the_resume_gets_its_line_counts_and_diff(
    tmp_path: Path, scripted_model
) -> None:
    (tmp_path / "later.txt").write_text("one\ntwo\n")
    (tmp_path / "first.txt").write_text("start\n")
    config = MercuryConfig(permissions="auto",
                           workdir=tmp_path, max_steps=1, max_auto_continuations=0)
    events: list[AgentEvent] = []
    first = await run_new_session("edit both files", config, on_event=events.append,
                                  model=scripted_model([write("first.txt", "first pass\n")]))
    assert first.status == "paused"
    data = last_checkpoint(events)
    assert json.loads(data["snapshot"])["files"]["later.txt"]["text"] is None  # not stored

    config = plan({"max_steps": 5}, checkpoint=data)
    outcome = await resume_task(data, config, model=scripted_model([
        write("later.txt", "one\nTWO\n"),
        Turn(text="Both files edited."),
    ]))
    assert outcome.status == "completed", outcome.banner
    later = next(c for c in outcome.changes if c.path == "later.txt")
    assert (later.measured, later.added, later.removed) == (True, 1, 1)
    assert "-two" in later.diff and "+TWO" in later.diff


async def test_a_file_changed_while_paused_keeps_its_stored_state(
    tmp_path: Path, scripted_model
) -> None:
    """Only files still exactly as they were get their text back: a file someone edited
    while the task was paused is compared by its start hash, never against today's text."""
    (tmp_path / "later.txt").write_text("one\ntwo\n")
    config = MercuryConfig(permissions="auto",
                           workdir=tmp_path, max_steps=1, max_auto_continuations=0)
    events: list[AgentEvent] = []
    await run_new_session("edit the file", config, on_event=events.append,
                          model=scripted_model([write("first.txt", "first pass\n")]))
    data = last_checkpoint(events)
    (tmp_path / "later.txt").write_text("one\nedited by hand\n")
    config = plan({"max_steps": 5}, checkpoint=data)
    outcome = await resume_task(data, config, model=scripted_model([
        write("later.txt", "one\nTWO\n"),
        Turn(text="Done."),
    ]))
    later = next(c for c in outcome.changes if c.path == "later.txt")
    assert later.measured is False and "was 8 bytes" in later.preview


LOOK = Turn(tool_calls=(call("list_dir", path="."),))
"""One step of the resumed task (its budget of one step then pauses it again)."""
HELLO_TASK = "Create hello.py that prints hello world, and test it with pytest."


async def failed_check_checkpoint(tmp_path: Path, scripted_model) -> dict[str, Any]:
    """A task that created hello.py, ran a failing pytest and paused on its step budget."""
    config = MercuryConfig(permissions="auto",
                           workdir=tmp_path, max_steps=2, max_auto_continuations=0)
    events: list[AgentEvent] = []
    first = await run_new_session(HELLO_TASK, config, on_event=events.append, model=scripted_model([
        write("hello.py", "print('hello world')\n"),
        Turn(tool_calls=(call("run_command", command="python -m pytest -q"),)),
    ]))
    assert first.status == "paused", first.banner
    return last_checkpoint(events)


def resume_turns(sent: tuple[dict[str, Any], ...], data: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages the resume added after the checkpointed conversation."""
    assert sent[: len(data["messages"])] == tuple(data["messages"])
    return list(sent[len(data["messages"]):])


async def test_the_resume_turn_says_the_task_the_changed_files_and_the_last_check(
    tmp_path: Path, scripted_model
) -> None:
    data = await failed_check_checkpoint(tmp_path, scripted_model)
    (tmp_path / "extra.txt").write_text("made while paused\n")  # measured on disk, not logged
    model = scripted_model([LOOK])
    await resume_task(data, plan({"max_steps": 1}, checkpoint=data), model=model,
                      blocker="the last check did not pass: python -m pytest -q ✗ (exit 5)")
    (turn,) = resume_turns(model.requests[0].messages, data)
    text = turn["content"]
    assert turn["role"] == "user" and text != "continue"
    assert text.startswith("[SYSTEM: RESUME]")  # a blocker named: not the step budget's words
    assert f'The task remains: "{HELLO_TASK}"' in text
    assert "hello.py (created)" in text and "extra.txt (created)" in text
    assert "Last check: `python -m pytest -q` failed (exit code 5)." in text
    assert ("Why it paused: the last check did not pass: python -m pytest -q ✗ (exit 5).\n"
            "What remains: finish the task.") in text


async def test_the_users_words_after_continue_are_kept_as_their_turn(
    tmp_path: Path, scripted_model
) -> None:
    data = await failed_check_checkpoint(tmp_path, scripted_model)
    model = scripted_model([LOOK])
    await resume_task(data, plan({"max_steps": 1}, checkpoint=data), model=model,
                      words="  but use unittest instead  ")
    resume, words = resume_turns(model.requests[0].messages, data)
    assert "hello.py (created)" in resume["content"]
    assert "what the user adds in the next message" in resume["content"]
    assert words == {"role": "user", "content": "but use unittest instead"}


async def test_a_resume_after_a_passing_check_does_not_ask_for_another(
    tmp_path: Path, scripted_model
) -> None:
    (tmp_path / "test_hello.py").write_text("def test_hello():\n    assert True\n")
    config = MercuryConfig(permissions="auto",
                           workdir=tmp_path, max_steps=2, max_auto_continuations=0)
    events: list[AgentEvent] = []
    await run_new_session(HELLO_TASK, config, on_event=events.append, model=scripted_model([
        write("hello.py", "print('hello world')\n"),
        Turn(tool_calls=(call("run_command", command="python -m pytest -q"),)),
    ]))
    data = last_checkpoint(events)
    model = scripted_model([Turn(text="Done.")])
    await resume_task(data, plan({"max_steps": 5}, checkpoint=data), model=model)
    (turn,) = resume_turns(model.requests[0].messages, data)
    assert "Last check: `python -m pytest -q` passed." in turn["content"]
    assert "Then run a check" not in turn["content"]


async def test_a_passing_run_the_task_asked_for_is_the_last_check(
    tmp_path: Path, scripted_model
) -> None:
    """"...and run it": ``python hello.py`` is the task's check, not "Last check: none"."""
    task = "Create hello.py that prints hello world, and run it."
    config = MercuryConfig(permissions="auto",
                           workdir=tmp_path, max_steps=2, max_auto_continuations=0)
    events: list[AgentEvent] = []
    await run_new_session(task, config, on_event=events.append, model=scripted_model([
        write("hello.py", "print('hello world')\n"),
        Turn(tool_calls=(call("run_command", command="python hello.py"),)),
    ]))
    data = last_checkpoint(events)
    model = scripted_model([Turn(text="Done.")])
    await resume_task(data, plan({"max_steps": 5}, checkpoint=data), model=model)
    (turn,) = resume_turns(model.requests[0].messages, data)
    assert "Last check: `python hello.py` passed." in turn["content"]
    assert "Last check: none" not in turn["content"]
    assert "Then run a check" not in turn["content"]


async def test_a_question_resumes_as_a_question(tmp_path: Path, scripted_model) -> None:
    (tmp_path / "README.md").write_text("# calc\nInstall with pip install calc.\n")
    config = MercuryConfig(permissions="auto",
                           workdir=tmp_path, max_steps=1, max_auto_continuations=0)
    events: list[AgentEvent] = []
    first = await run_new_session("What does README.md say about installing?", config,
                                  on_event=events.append, model=scripted_model([LOOK]))
    assert first.status == "paused", first.banner
    data = last_checkpoint(events)
    model = scripted_model([Turn(text="It says: pip install calc.")])
    await resume_task(data, plan({"max_steps": 5}, checkpoint=data), model=model)
    (turn,) = resume_turns(model.requests[0].messages, data)
    text = turn["content"]
    assert text.startswith("[SYSTEM: RESUME]") and "What remains: answer the question." in text
    for work_words in ("NOT done", "do not summarize", "run a check", "Carry on with tools"):
        assert work_words not in text


async def test_another_model_is_not_told_the_old_models_blocker(
    tmp_path: Path, scripted_model
) -> None:
    data = await failed_check_checkpoint(tmp_path, scripted_model)
    model = scripted_model([LOOK])
    await resume_task(data, plan({"max_steps": 1}, checkpoint=data), model=model,
                      blocker="smollm2 does not take tools (its server reports no tool support)",
                      settings_changed=True)
    (turn,) = resume_turns(model.requests[0].messages, data)
    assert "smollm2" not in turn["content"] and "What remains: the whole task" in turn["content"]
