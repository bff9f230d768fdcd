"""The finish tool ends the turn: done meets the gate, blocked and question end honestly.

Every script here is played to its end and no further (the fakes check it at teardown), so
a loop that asked the model again after a finish call would fail."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mercury_nb.agent.events import AgentEvent, ToolStarted
from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.banners import TASK_COMPLETE, VERIFICATION_FAILED
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.testing import Turn, call

TEST_PY = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
CALC = "def add(a, b):\n    return a + b\n"
TASK = "Write calc.add with a test"


def cfg(tmp_path: Path, **kw: Any) -> MercuryConfig:
    return MercuryConfig(permissions="auto", workdir=tmp_path, retry_base_s=0.0, **kw)


def write_calc() -> Turn:
    return Turn(tool_calls=(call("create_file", path="calc.py", content=CALC),
                            call("create_file", path="test_calc.py", content=TEST_PY)))


async def test_finish_done_after_a_passing_check_is_a_completion(tmp_path: Path,
                                                                  backend) -> None:
    fake = backend([
        write_calc(),
        Turn(tool_calls=(call("run_command", command="python -m pytest -q test_calc.py"),)),
        Turn(tool_calls=(call("finish", status="done", summary="Added add() with a test."),)),
    ])
    outcome = await run_new_session(TASK, cfg(tmp_path), model=fake.model)
    assert outcome.status == "completed", outcome.banner
    assert outcome.verdict == "text-stop"
    assert outcome.banner.startswith(TASK_COMPLETE)
    assert "✓ Verified: python -m pytest -q test_calc.py ✓" in outcome.banner
    assert outcome.answer == "Added add() with a test."
    assert len(fake.requests) == 3
    assert "finish" in fake.tool_names(0)


async def test_finish_with_other_calls_in_the_step_runs_them_then_ends(tmp_path: Path,
                                                                       scripted_model) -> None:
    fake = scripted_model([Turn(tool_calls=(
        call("create_file", path="calc.py", content=CALC),
        call("create_file", path="test_calc.py", content=TEST_PY),
        call("finish", status="done", summary="Added and tested."),
        call("run_command", command="python -m pytest -q test_calc.py"),
    ))])
    events: list[AgentEvent] = []
    outcome = await run_new_session(TASK, cfg(tmp_path), model=fake, on_event=events.append)
    assert [e.name for e in events if isinstance(e, ToolStarted)] == [
        "create_file", "create_file", "finish", "run_command"]
    assert outcome.status == "completed", outcome.banner
    assert outcome.steps == 1 and len(fake.requests) == 1


async def test_finish_done_without_evidence_is_still_refused(tmp_path: Path,
                                                             scripted_model) -> None:
    done = Turn(tool_calls=(call("finish", status="done", summary="All done."),))
    fake = scripted_model([write_calc(), done, done])
    outcome = await run_new_session(TASK, cfg(tmp_path), model=fake)
    assert fake.requests[2].tool_choice == "required"  # the gate's forced verification
    assert outcome.status == "paused"
    assert outcome.banner.startswith(VERIFICATION_FAILED)
    assert TASK_COMPLETE not in outcome.banner
    assert outcome.answer is None


async def test_finish_blocked_pauses_naming_the_blocker(tmp_path: Path, backend) -> None:
    fake = backend([
        Turn(tool_calls=(call("list_dir", path="."),)),
        Turn(tool_calls=(call("finish", status="blocked", summary="Nothing changed.",
                              blocker="pip cannot reach PyPI from this machine"),)),
    ])
    outcome = await run_new_session("Install requests and fetch example.com", cfg(tmp_path),
                                    model=fake.model)
    assert outcome.status == "paused"
    assert outcome.banner.split("\n")[:2] == [
        "I've paused — I couldn't finish this one.",
        "What blocked it: pip cannot reach PyPI from this machine",
    ]
    assert outcome.blocker == "pip cannot reach PyPI from this machine"  # the banner labels it
    assert len(fake.requests) == 2  # no guard round although nothing changed


async def test_finish_question_ends_as_a_question_to_the_user(tmp_path: Path,
                                                             scripted_model) -> None:
    fake = scripted_model([Turn(tool_calls=(call(
        "finish", status="question", question="Should todos live in JSON or SQLite?"),))])
    outcome = await run_new_session("Build a todo CLI in todo.py with tests", cfg(tmp_path),
                                    model=fake)
    assert outcome.status == "paused"
    assert outcome.banner.split("\n")[0] == (
        "I need your answer before I go on: Should todos live in JSON or SQLite?")
    assert outcome.blocker == "Should todos live in JSON or SQLite?"
    assert len(fake.requests) == 1


async def test_sorry_i_cant_after_changing_files_is_never_task_complete(
    tmp_path: Path, scripted_model
) -> None:
    fake = scripted_model([
        Turn(tool_calls=(call("create_file", path="notes.txt", content="A sample file"),)),
        Turn(text="I'm sorry, I can't do that."),
        Turn(text="I'm sorry, I can't do that."),  # to the forced round naming hello.py
    ])
    outcome = await run_new_session("Create hello.py that prints hello world, and run it.",
                                    cfg(tmp_path), model=fake)
    assert outcome.status == "paused"
    assert TASK_COMPLETE not in outcome.banner
    # the measured blocker outranks the model's words about itself: hello.py does not exist
    assert "hello.py was not created" in outcome.banner
    assert "notes.txt" in outcome.banner  # the changes so far are listed


async def test_sorry_i_cant_after_changing_files_names_the_blocker_it_gave(
    tmp_path: Path, scripted_model
) -> None:
    fake = scripted_model([
        Turn(tool_calls=(call("create_file", path="notes.md", content="# Notes"),)),
        Turn(text="I'm sorry, I can't do that."),
    ])
    outcome = await run_new_session("Add a function add(a, b) to the notes app and test it.",
                                    cfg(tmp_path), model=fake)
    assert outcome.status == "paused"
    assert TASK_COMPLETE not in outcome.banner
    assert "What blocked it: I'm sorry, I can't do that." in outcome.banner
    assert "notes.md" in outcome.banner


async def test_a_refused_finish_call_ends_nothing(tmp_path: Path, scripted_model) -> None:
    fake = scripted_model([
        Turn(tool_calls=(call("finish", status="finished"),)),  # not a status: an error
        Turn(text="What does `add` need to return for strings?"),
    ])
    outcome = await run_new_session(TASK, cfg(tmp_path), model=fake)
    assert len(fake.requests) == 2
    assert "status" in fake.requests[1].messages[-1]["content"]
    assert outcome.status == "paused"
    assert outcome.blocker == "What does `add` need to return for strings?"


async def test_finish_in_chat_mode_is_the_answer(tmp_path: Path, scripted_model) -> None:
    fake = scripted_model([Turn(tool_calls=(call(
        "finish", status="question", summary="There are two parse() functions.",
        question="Which one do you mean?"),))])
    outcome = await run_new_session("What does parse() do?", cfg(tmp_path, mode="chat"), model=fake)
    assert outcome.status == "completed"
    assert outcome.banner == "Response delivered · no file changes (snapshot-verified)"
    assert outcome.answer == "There are two parse() functions.\n\nWhich one do you mean?"
