"""A task that asks to run something, through the whole loop: only a passing run of what it
asked for verifies it, with or without changes; a command run satisfies the narration
guard; a failed or missing run gets the gate's one forced round, then a pause naming it;
and a prose "I couldn't" gives way to a passing check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.banners import TASK_COMPLETE
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.outcome import TaskOutcome
from mercury_nb.testing import Turn, call
from mercury_nb.testing.script import ScriptStep

DONE = call("finish", status="done", summary="Ran it.")


async def run(tmp_path: Path, scripted_model: Any, task: str, turns: list[ScriptStep]
              ) -> tuple[TaskOutcome, Any]:
    model = scripted_model(turns)
    config = MercuryConfig(permissions="auto", workdir=tmp_path, retry_base_s=0.0)
    return await run_new_session(task, config, model=model), model


async def test_finding_1_a_run_of_another_program_never_completes_a_run_task(
    tmp_path: Path, scripted_model: Any
) -> None:
    (tmp_path / "build.py").write_text("import sys; sys.exit(1)\n")
    (tmp_path / "other.py").write_text("print('ok')\n")
    outcome, model = await run(tmp_path, scripted_model, "Run python build.py", [
        Turn(tool_calls=(call("run_command", command="python other.py"),)),
        Turn(text="Done, it ran fine."),
        Turn(text="Done, it ran fine."),  # the gate's one forced round
    ])
    assert outcome.status == "paused", outcome.banner
    assert "no file changes" not in outcome.banner
    assert "The task asks me to run build.py" in outcome.banner
    assert outcome.blocker == "Last run: none — build.py never ran."
    assert [r.tool_choice for r in model.requests] == ["auto", "auto", "required"]
    assert "The task asks you to run build.py" in model.requests[-1].messages[-1]["content"]


async def test_finding_2_a_passing_unittest_is_no_run_of_hello_py(
    tmp_path: Path, scripted_model: Any
) -> None:
    outcome, model = await run(
        tmp_path, scripted_model, "Create hello.py that prints hello world, and run it.", [
            Turn(tool_calls=(call("create_file", path="hello.py", content="x = 1\n"),)),
            Turn(tool_calls=(call("run_command", command="python -m unittest"),)),
            Turn(tool_calls=(DONE,)),
            Turn(tool_calls=(DONE,)),
        ])
    assert outcome.status == "paused", outcome.banner
    assert TASK_COMPLETE not in outcome.banner
    assert "✓ Verified" not in outcome.banner
    assert "Last run: none — hello.py never ran." in outcome.banner
    assert model.requests[-1].tool_choice == "required"


async def test_finding_2_run_it_with_no_program_named_needs_a_run_of_a_changed_program(
    tmp_path: Path, scripted_model: Any
) -> None:
    outcome, _ = await run(tmp_path, scripted_model, "Create a hello world script and run it", [
        Turn(tool_calls=(call("create_file", path="file.txt", content="A sample file"),)),
        Turn(tool_calls=(call("run_command", command="python -m unittest"),)),
        Turn(text="Done."),
        Turn(text="Done."),
    ])
    assert outcome.status == "paused", outcome.banner
    assert TASK_COMPLETE not in outcome.banner


async def test_finding_6_the_requested_read_only_command_completes_with_its_evidence(
    tmp_path: Path, scripted_model: Any
) -> None:
    outcome, model = await run(tmp_path, scripted_model, "Run the shell command: ls -la", [
        Turn(tool_calls=(call("run_command", command="ls -la"),)),
        Turn(tool_calls=(DONE,)),
    ])
    assert outcome.status == "completed", outcome.banner
    assert outcome.banner.splitlines() == [TASK_COMPLETE, "✓ Verified: ls -la ✓"]
    assert [r.tool_choice for r in model.requests] == ["auto", "auto"]
    [entry] = outcome.evidence
    assert (entry.command, entry.exit_code, entry.kind, entry.after_last_change) == (
        "ls -la", 0, "command", True)


async def test_finding_6_run_the_tests_completes_on_the_passing_test_run(
    tmp_path: Path, scripted_model: Any
) -> None:
    (tmp_path / "test_x.py").write_text("def test_x():\n    assert True\n")
    outcome, model = await run(tmp_path, scripted_model, "Run the tests", [
        Turn(tool_calls=(call("run_command", command="python -m pytest -q"),)),
        Turn(text="All tests pass."),
    ])
    assert outcome.status == "completed", outcome.banner
    assert "✓ Verified: python -m pytest -q ✓" in outcome.banner.splitlines()
    assert len(model.requests) == 2


async def test_finding_8_a_prose_i_couldnt_gives_way_to_the_passing_test(
    tmp_path: Path, scripted_model: Any
) -> None:
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (tmp_path / "test_calc.py").write_text(
        "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    outcome, _ = await run(tmp_path, scripted_model, "Fix the failing test in test_calc.py", [
        Turn(tool_calls=(call("edit_file", path="calc.py", old_text="a - b", new_text="a + b"),)),
        Turn(tool_calls=(call("run_command", command="python -m pytest -q"),)),
        Turn(text="I couldn't see the bug at first, but add() subtracted; it adds now and the"
                  " test passes."),
    ])
    assert outcome.status == "completed", outcome.banner
    assert "✓ Verified: python -m pytest -q ✓" in outcome.banner.splitlines()


async def test_finding_9_a_failed_requested_run_pauses_naming_it_after_one_round(
    tmp_path: Path, scripted_model: Any
) -> None:
    outcome, model = await run(tmp_path, scripted_model, "Run the shell command: false", [
        Turn(tool_calls=(call("run_command", command="false"),)),
        Turn(text="Done."),
        Turn(text="Done."),
    ])
    assert outcome.status == "paused", outcome.banner
    assert "couldn't get started" not in outcome.banner
    assert "The task asks me to run `false`" in outcome.banner
    assert outcome.blocker == "the last check did not pass: false ✗ (exit 1)"
    assert [r.tool_choice for r in model.requests] == ["auto", "auto", "required"]
    assert "`false` exited 1" in model.requests[-1].messages[-1]["content"]
