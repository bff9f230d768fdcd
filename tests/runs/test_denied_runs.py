"""The user's own Deny through the runs layer's door: the task goes on, and if it then
cannot finish it pauses naming the denied command; a continue that is allowed finishes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_permission_runs import WRITE, FakeApprover

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.runs import Refusal, RunRequest, submit
from mercury_nb.testing import Turn, call

TASK = "Create made.txt by running the script."
DENIED = (f'you denied permission to run "{WRITE}" — allow it with --allow "{WRITE}" or '
          "--permissions auto (the model said: I may not run the script that writes made.txt.)")
BLOCKED = Turn(tool_calls=(call("finish", status="blocked",
                                blocker="I may not run the script that writes made.txt."),))
RAN = Turn(text="Ran the script: made.txt holds ok.")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


async def run(workspace: Path, home: Path, model: Any, approver: FakeApprover,
              task_id: str | None = None, max_steps: int | None = None) -> Any:
    config = MercuryConfig(workdir=workspace, home=home, mode="execute",
                           **({} if max_steps is None else {"max_steps": max_steps}))
    request = RunRequest(task="" if task_id else TASK, config=config, model=model,
                         approver=approver, resume=task_id is not None, task_id=task_id)
    started = submit(request)
    assert not isinstance(started, Refusal), started
    return await started.outcome()


async def test_a_deny_the_task_cannot_get_past_pauses_naming_it_and_continue_finishes(
        workspace: Path, home: Path, scripted_model: Any) -> None:
    denier = FakeApprover("deny")
    first = scripted_model([Turn(tool_calls=(call("run_command", command=WRITE),)), BLOCKED])
    paused = await run(workspace, home, first, denier)
    first.assert_complete()
    assert [r.command for r in denier.asked] == [WRITE]
    assert (paused.status, paused.resumable) == ("paused", True)
    assert paused.blocker == DENIED
    assert DENIED in paused.banner and 'Send "continue"' in paused.banner
    assert not (workspace / "made.txt").exists()

    allower = FakeApprover("allow-once")
    second = scripted_model([Turn(tool_calls=(call("run_command", command=WRITE),)), RAN])
    done = await run(workspace, home, second, allower, task_id=paused.task_id)
    second.assert_complete()
    assert [(r.command, r.request_id) for r in allower.asked] == [(WRITE, 1)]  # asked anew
    resumed = str(second.requests[0].messages[-1].get("content"))
    assert f'Why it paused: you denied permission to run "{WRITE[:20]}' in resumed
    assert done.status == "completed", done.banner
    assert (workspace / "made.txt").read_text() == "ok"
    assert "denied" not in done.banner and done.blocker is None


async def test_another_way_after_a_deny_completes_without_naming_the_deny(
        workspace: Path, home: Path, scripted_model: Any) -> None:
    model = scripted_model([
        Turn(tool_calls=(call("run_command", command=WRITE),)),
        Turn(tool_calls=(call("create_file", path="made.txt", content="ok"),)),
        Turn(text="Wrote made.txt directly instead."),
    ])
    done = await run(workspace, home, model, FakeApprover("deny"))
    model.assert_complete()
    assert done.status == "completed", done.banner
    assert "denied" not in done.banner and done.blocker is None


async def test_a_deny_then_a_pause_for_its_own_cause_keeps_that_cause(
        workspace: Path, home: Path, scripted_model: Any) -> None:
    question = Turn(tool_calls=(call("finish", status="question",
                                     question="Should made.txt say ok or okay?"),))
    model = scripted_model([Turn(tool_calls=(call("run_command", command=WRITE),)), question])
    paused = await run(workspace, home, model, FakeApprover("deny"))
    assert paused.status == "paused"
    assert paused.blocker == "Should made.txt say ok or okay?"
    assert "denied" not in paused.banner


@pytest.mark.parametrize("max_steps", [None, 1], ids=["one-budget", "resumed-sub-agent"])
async def test_a_deny_inside_a_sub_agent_is_named_by_the_parents_pause(
        workspace: Path, home: Path, scripted_model: Any, max_steps: int | None) -> None:
    """The user denied the sub-agent's command; the parent, which could not finish without
    it either, pauses naming that command and how to allow it (before, only the sub-agent's
    own ending named it, and the parent's pause spoke of its model's words alone). With one
    step per budget the supervisor resumes the sub-agent after the deny: the resumed
    session still holds it."""
    model = scripted_model([
        Turn(tool_calls=(call("delegate_task", task="Run the script that writes made.txt."),)),
        Turn(tool_calls=(call("run_command", command=WRITE),)),  # the sub-agent: denied
        BLOCKED,  # the sub-agent gives up
        Turn(tool_calls=(call("finish", status="blocked",
                              blocker="The helper could not run the script."),)),
    ])
    denier = FakeApprover("deny")
    paused = await run(workspace, home, model, denier, max_steps=max_steps)
    model.assert_complete()
    assert [r.command for r in denier.asked] == [WRITE]
    assert paused.status == "paused", paused.banner
    assert paused.blocker == (
        f'you denied permission to run "{WRITE}" — allow it with --allow "{WRITE}" or '
        "--permissions auto (the model said: The helper could not run the script.)")
    assert not (workspace / "made.txt").exists()
