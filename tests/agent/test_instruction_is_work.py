"""An instruction with no work word is work: a prose reply meets the guard and the command
runs (what the banner then says of a task that changed no file is the gate's business)."""

from __future__ import annotations

from pathlib import Path

from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.testing import Turn, call

SLEEP_LESSON = (  # a small model's recorded reply to the task below
    "sleep 300\n\n# What is a task?\n\n# A task is a reusable function that returns a new "
    "function that can be reused by other functions."
)


async def test_run_the_shell_command_is_not_answered_as_a_question(
    tmp_path: Path, scripted_model
) -> None:
    fake = scripted_model([
        Turn(text=SLEEP_LESSON),
        Turn(tool_calls=(call("run_command", command="sleep 0"),)),
        Turn(tool_calls=(call("finish", status="done", summary="Slept."),)),
    ])
    config = MercuryConfig(permissions="auto", workdir=tmp_path, retry_base_s=0.0)
    outcome = await run_new_session("Run the shell command: sleep 0", config, model=fake)
    assert fake.requests[1].tool_choice == "required"  # the guard forced the first move
    assert [e.command for e in outcome.evidence] == ["sleep 0"]


async def test_a_task_that_is_a_command_line_completes_when_that_command_passes(
    tmp_path: Path, scripted_model
) -> None:
    (tmp_path / "server.log").write_text("started\nready\n")
    fake = scripted_model([
        Turn(tool_calls=(call("run_command", command="tail -n 50 server.log"),)),
        Turn(tool_calls=(call("finish", status="done", summary="Shown above."),)),
    ])
    config = MercuryConfig(permissions="auto", workdir=tmp_path, retry_base_s=0.0)
    outcome = await run_new_session("tail -n 50 server.log", config, model=fake)
    assert outcome.status == "completed", outcome.banner
    assert len(fake.requests) == 2  # no guard rounds: running it was the task
    assert [e.command for e in outcome.evidence] == ["tail -n 50 server.log"]


async def test_a_command_line_task_answered_by_another_command_is_not_verified(
    tmp_path: Path, scripted_model
) -> None:
    (tmp_path / "server.log").write_text("started\nready\n")
    fake = scripted_model([
        Turn(tool_calls=(call("run_command", command="ls"),)),
        Turn(tool_calls=(call("finish", status="done", summary="Shown above."),)),
        Turn(tool_calls=(call("finish", status="done", summary="Done."),)),
    ])
    config = MercuryConfig(permissions="auto", workdir=tmp_path, retry_base_s=0.0)
    outcome = await run_new_session("tail -n 50 server.log", config, model=fake)
    assert outcome.status != "completed", outcome.banner
    assert "tail -n 50 server.log" in (outcome.blocker or outcome.banner)
