"""Evidence answers the task, through the whole loop: junk prose never completes a code or
run task, files the task names must exist, the requested run counts, and every
``✓ Verified`` line of a banner has its evidence entry."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.banners import TASK_COMPLETE
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.outcome import TaskOutcome
from mercury_nb.testing import Turn, call
from mercury_nb.testing.script import ScriptStep

HELLO_TASK = "Create hello.py that prints hello world, and run it."
CALC_TASK = (
    "Add a function add(a, b) to calc.py and a pytest test in test_calc.py, then make the "
    "tests pass."
)
SORRY = (
    'I\'m sorry for the miscommunication, but the correct example is:\n\n"create_file (1 line)'
    ' creates a file named "file.txt"."'
)
TEST_PY = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def cfg(tmp_path: Path, **kw: Any) -> MercuryConfig:
    return MercuryConfig(permissions="auto", workdir=tmp_path, retry_base_s=0.0, **kw)


async def run(tmp_path: Path, scripted_model: Any, task: str, turns: list[ScriptStep],
              **kw: Any) -> tuple[TaskOutcome, Any]:
    model = scripted_model(turns)
    return await run_new_session(task, cfg(tmp_path, **kw), model=model), model


async def test_r9_junk_text_file_for_hello_py_pauses_naming_it(
    tmp_path: Path, scripted_model: Any
) -> None:
    outcome, model = await run(tmp_path, scripted_model, HELLO_TASK, [
        Turn(text="```python\nprint('Hello, World!')\n```\n\nThis will output: `Hello, World!`."),
        Turn(tool_calls=(call("create_file", path="file.txt", content="A sample file"),)),
        Turn(text=SORRY),
        Turn(text=SORRY),  # the gate's one forced round, naming hello.py
    ])
    assert outcome.status == "paused", outcome.banner
    assert "Task complete" not in outcome.banner
    assert "✓ Verified" not in outcome.banner
    assert "hello.py was not created" in outcome.banner
    assert outcome.blocker == "hello.py was not created"
    assert "+1 −0 file.txt (created)" in outcome.banner
    forced = model.requests[-1]
    assert forced.tool_choice == "required"
    assert "hello.py was not created" in forced.messages[-1]["content"]


def git_workspace(root: Path) -> None:
    for args in (("init", "-q", "-b", "main"), ("config", "user.name", "Test"),
                 ("config", "user.email", "test@example.com"), ("config", "commit.gpgsign",
                 "false"), ("commit", "-q", "--allow-empty", "-m", "start")):
        subprocess.run(["git", *args], cwd=root, capture_output=True, check=True)


@pytest.mark.parametrize("in_git", [pytest.param(False, id="r10-snapshot"),
                                    pytest.param(True, id="r12-git")])
async def test_r10_junk_text_file_for_calc_pauses_naming_both_files(
    tmp_path: Path, scripted_model: Any, in_git: bool
) -> None:
    if in_git:
        git_workspace(tmp_path)
    outcome, _ = await run(tmp_path, scripted_model, CALC_TASK, [
        Turn(text="You can modify the `calc.py` and `test_calc.py` scripts to create a new file."),
        Turn(tool_calls=(call("create_file", path="create_file_path.txt",
                              content="The file has been created."),)),
        Turn(text="<tool_response>\nAdded a new task to the function.</tool_response>"),
        Turn(text="<tool_response>\nAdded a new task to the function.</tool_response>"),
    ])
    assert outcome.status == "paused", outcome.banner
    assert "Task complete" not in outcome.banner
    assert "calc.py was not created" in outcome.banner
    assert "test_calc.py was not created" in outcome.banner
    assert "+1 −0 create_file_path.txt (created)" in outcome.banner


async def test_r14b_junk_csv_for_a_run_task_pauses(tmp_path: Path, scripted_model: Any) -> None:
    outcome, model = await run(tmp_path, scripted_model,
                               "Run the shell command `sleep 300` in the workspace.", [
        Turn(tool_calls=(call("create_file", path="workspace/workspace.csv.csv",
                              content="file_path/workspace"),)),
        Turn(text="I'll be happy to help with that! What can I help you with today?"),
        Turn(text="Done."),
    ])
    assert outcome.status == "paused", outcome.banner
    assert "Task complete" not in outcome.banner
    assert "The task asks you to run `sleep 300`" in model.requests[-1].messages[-1]["content"]


async def test_hello_py_run_after_it_is_the_evidence(tmp_path: Path, scripted_model: Any) -> None:
    outcome, _ = await run(tmp_path, scripted_model, HELLO_TASK, [
        Turn(tool_calls=(call("create_file", path="hello.py", content="print('hello world')\n"),)),
        Turn(tool_calls=(call("run_command", command="python hello.py"),)),
        Turn(text="hello.py prints hello world."),
    ])
    assert outcome.status == "completed", outcome.banner
    assert outcome.banner.startswith(TASK_COMPLETE)
    assert "✓ Verified: python hello.py ✓" in outcome.banner.splitlines()
    [entry] = outcome.evidence
    assert (entry.command, entry.exit_code, entry.kind, entry.after_last_change) == (
        "python hello.py", 0, "command", True)


async def test_a_failing_run_of_hello_py_is_no_evidence(
    tmp_path: Path, scripted_model: Any
) -> None:
    outcome, _ = await run(tmp_path, scripted_model, HELLO_TASK, [
        Turn(tool_calls=(call("create_file", path="hello.py", content="raise SystemExit(3)\n"),)),
        Turn(tool_calls=(call("run_command", command="python hello.py"),)),
        Turn(text="Done."),
        Turn(text="Done."),
    ])
    assert outcome.status == "paused", outcome.banner
    assert "Last check: python hello.py ✗ (exit 3)" in outcome.banner


async def test_a_run_of_another_program_is_no_evidence(
    tmp_path: Path, scripted_model: Any
) -> None:
    outcome, _ = await run(tmp_path, scripted_model, HELLO_TASK, [
        Turn(tool_calls=(call("create_file", path="hello.py", content="print('hello world')\n"),
                         call("create_file", path="other.py", content="print('x')\n"))),
        Turn(tool_calls=(call("run_command", command="python other.py"),)),
        Turn(text="Done."),
        Turn(text="Done."),
    ])
    assert outcome.status == "paused", outcome.banner


async def test_a_notes_task_still_completes_with_its_read_back(
    tmp_path: Path, scripted_model: Any
) -> None:
    outcome, _ = await run(tmp_path, scripted_model, "Write a summary of the project in NOTES.md", [
        Turn(tool_calls=(call("create_file", path="NOTES.md", content="# Summary\nA CLI.\n"),)),
        Turn(text="Wrote the summary."),
    ])
    assert outcome.status == "completed", outcome.banner
    assert "✓ Verified: change summary and read-back of NOTES.md ✓" in outcome.banner
    [entry] = outcome.evidence
    assert (entry.kind, entry.path, entry.exit_code) == ("read-back", "NOTES.md", 0)


async def test_chat_mode_never_forces_a_round_and_junk_prose_does_not_complete(
    tmp_path: Path, scripted_model: Any
) -> None:
    outcome, model = await run(tmp_path, scripted_model, HELLO_TASK, [
        Turn(tool_calls=(call("create_file", path="file.txt", content="A sample file"),)),
        Turn(text="Done."),
    ], mode="chat")
    assert len(model.requests) == 2
    assert outcome.status == "paused"
    assert "Task complete" not in outcome.banner


COMPLETIONS = [
    pytest.param(CALC_TASK, [
        Turn(tool_calls=(call("create_file", path="calc.py", content="def add(a, b):\n"
                              "    return a + b\n"),
                         call("create_file", path="test_calc.py", content=TEST_PY))),
        Turn(tool_calls=(call("run_command", command="python -m pytest -q test_calc.py"),)),
        Turn(text="Added add() with a passing test."),
    ], id="pytest"),
    pytest.param(HELLO_TASK, [
        Turn(tool_calls=(call("create_file", path="hello.py", content="print('hi')\n"),)),
        Turn(tool_calls=(call("run_command", command="python hello.py"),)),
        Turn(text="Ran it."),
    ], id="requested-run"),
    pytest.param("Write a summary of the project in NOTES.md", [
        Turn(tool_calls=(call("create_file", path="NOTES.md", content="summary\n"),)),
        Turn(text="Done."),
    ], id="read-back"),
    pytest.param("Write notes in notes.md and a todo list in todo.md", [
        Turn(tool_calls=(call("create_file", path="notes.md", content="notes\n"),
                         call("create_file", path="todo.md", content="- a\n"))),
        Turn(tool_calls=(call("run_command", command="cat notes.md"),)),
        Turn(text="Done."),
    ], id="read-back-two-files"),
]


@pytest.mark.parametrize(("task", "turns"), COMPLETIONS)
async def test_every_verified_line_has_its_evidence_entry(
    tmp_path: Path, scripted_model: Any, task: str, turns: list[ScriptStep]
) -> None:
    outcome, _ = await run(tmp_path, scripted_model, task, turns)
    assert outcome.status == "completed", outcome.banner
    verified = [line for line in outcome.banner.splitlines() if line.startswith("✓ Verified")]
    assert verified
    for line in verified:
        body = line.removeprefix("✓ Verified: ").removesuffix(" ✓")
        if body.startswith("change summary and read-back of "):
            paths = body.removeprefix("change summary and read-back of ").split(", ")
            found = {e.path for e in outcome.evidence if e.kind == "read-back" and e.exit_code == 0}
            assert set(paths) <= found, (line, outcome.evidence)
        else:
            assert any(e.command == body and e.exit_code == 0 and e.after_last_change
                       and e.kind in ("command", "notebook") for e in outcome.evidence), (
                line, outcome.evidence)
    dumped = TaskOutcome.model_validate_json(outcome.model_dump_json())
    assert dumped.evidence == outcome.evidence


async def test_a_command_that_wrote_nothing_is_no_hello_py(
    tmp_path: Path, scripted_model: Any
) -> None:
    # a change was attempted (a command ran), so the guard lets it by; nothing changed on
    # disk, yet the task named hello.py: never "Response delivered", never completed
    outcome, model = await run(tmp_path, scripted_model, HELLO_TASK, [
        Turn(tool_calls=(call("run_command", command="python3 -c 'print(1)'"),)),
        Turn(text="Done: hello.py prints hello world."),
        Turn(text="Done."),  # the gate's forced round, naming hello.py
    ])
    assert outcome.status == "paused", outcome.banner
    assert "Response delivered" not in outcome.banner
    assert outcome.blocker == "hello.py was not created"
    forced = model.requests[-1]
    assert forced.tool_choice == "required"
    assert "Nothing changed on disk yet." in forced.messages[-1]["content"]
