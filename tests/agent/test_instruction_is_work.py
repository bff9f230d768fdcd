"""An instruction with no work word is work: a prose reply meets the guard and the command
runs (what the banner then says of a task that changed no file is the gate's business)."""

from __future__ import annotations

from pathlib import Path

from mercury_nb.agent.task import run_task
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
    config = MercuryConfig(workdir=tmp_path, retry_base_s=0.0)
    outcome = await run_task("Run the shell command: sleep 0", config, model=fake)
    assert fake.requests[1].tool_choice == "required"  # the guard forced the first move
    assert [e.command for e in outcome.evidence] == ["sleep 0"]
