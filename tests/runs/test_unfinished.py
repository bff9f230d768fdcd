"""A task whose process ends before it can finish is recorded ``aborted``, its commands killed:
what a forced exit and a kernel's exit fall back on."""

from __future__ import annotations

from pathlib import Path

from crossproc import LONG_COMMAND, pid_in, wait_for

from mercury_nb.contract.banners import ABORTED
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.ledger.access import open_ledger
from mercury_nb.runs import unfinished
from mercury_nb.runs.launch import launch
from mercury_nb.runs.planning import PlannedRun, plan_task
from mercury_nb.testing import Turn, call
from mercury_nb.testing.orphans import alive


async def test_an_unfinished_task_is_recorded_aborted_and_its_commands_killed(
    home: Path, tmp_path: Path, scripted_model
) -> None:
    handle = open_ledger(home)
    config = MercuryConfig(permissions="auto", workdir=tmp_path, home=home)
    planned = plan_task(handle, "wait", config)
    assert isinstance(planned, PlannedRun)
    model = scripted_model([Turn(tool_calls=(call("run_command", command=LONG_COMMAND),))])
    run = launch(planned, model=model)
    await wait_for(lambda: pid_in(tmp_path / "child.pid") is not None, "the command to run")
    pids = [pid_in(tmp_path / "shell.pid"), pid_in(tmp_path / "child.pid")]
    assert unfinished.unfinished() == (run.task_id,)

    # as a process that ends: its loop does not run meanwhile (called here, blocking it)
    assert unfinished.abort_unfinished() == (run.task_id,)
    run.stop()
    record = handle.ledger.get(run.task_id)
    assert record is not None
    assert (record.status, record.verdict, record.banner) == (
        "aborted", "aborted", ABORTED["interrupt"])
    assert not [pid for pid in pids if pid is not None and alive(pid)]
    assert unfinished.unfinished() == ()
    assert unfinished.abort_unfinished() == ()  # once

    outcome = await run.outcome()  # the task itself still ends, without a second record
    assert outcome.status == "aborted"
    handle.flush()
    again = handle.ledger.get(run.task_id)
    assert again is not None and again.banner == ABORTED["interrupt"]
