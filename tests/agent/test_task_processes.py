"""A task's end kills what its commands left running (setsid and orphaned children too)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from mercury_nb.agent.events import AgentEvent, Notice
from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.testing import Turn, call
from mercury_nb.testing.orphans import (
    alive,
    orphan_writer,
    read_pid,
    wait_until_gone,
)


async def test_task_end_kills_an_orphaned_setsid_child(tmp_path: Path, scripted_model) -> None:
    pids: list[int] = []
    workspace = tmp_path / "ws"
    workspace.mkdir()
    pid_file = tmp_path / "orphan.pid"  # outside the workspace: the task changes nothing

    def after_command(request: object) -> Turn:
        pids.append(read_pid(pid_file, 5))
        assert alive(pids[0])  # still running while the task goes on
        return Turn(text="Started the helper.")

    model = scripted_model([
        Turn(tool_calls=(call("run_command", command=f"{orphan_writer(pid_file)}; echo started"),)),
        after_command,
    ])
    events: list[AgentEvent] = []
    config = MercuryConfig(permissions="auto", workdir=workspace, mode="chat")
    outcome = await run_new_session("start the helper", config, model=model,
                                    on_event=events.append)
    [pid] = pids
    assert await asyncio.to_thread(wait_until_gone, pid), f"setsid child {pid} outlived the task"
    assert outcome.status == "completed"
    [notice] = [e.text for e in events if isinstance(e, Notice) and "left running" in e.text]
    assert str(pid) in notice and "killed" in notice
