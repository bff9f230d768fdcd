"""Watch from anywhere: a reader in this process sees, in order and typed, the events of a task
that a CLI process runs."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

from crossproc import cli_env

from mercury_nb import runs
from mercury_nb.runs.events import EVENT_KINDS
from mercury_nb.testing import Turn, call

WATCH_WITHIN_S = 0.5


async def test_a_reader_sees_another_processes_events_in_order_with_typed_kinds(
    tmp_path: Path, loopback_server
) -> None:
    home = tmp_path / "home"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    server = loopback_server([
        Turn(tool_calls=(call("write_file", path="a.txt", content="a\n"),)),
        Turn(tool_calls=(call("run_command", command="echo checked"),)),
        Turn(text="Wrote a.txt."),
    ])
    seen: list[tuple[runs.RunEvent, float]] = []

    async def read() -> None:
        async for event in runs.watch(home=home, until_finished=True):
            seen.append((event, time.time()))

    reader = asyncio.create_task(read())
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mercury_nb", "run", "--permissions", "auto",
"write a.txt", "--model", "openai/m",
        "--api-base", server.url, "--chat", "--json", cwd=workspace, env=cli_env(home),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        await asyncio.wait_for(reader, timeout=120)
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()

    events = [event for event, _ in seen]
    assert all(event.kind in EVENT_KINDS for event in events)
    assert [e.id for e in events] == sorted(e.id for e in events)
    assert len({e.task_id for e in events}) == 1
    kinds = [e.kind for e in events]
    assert kinds[0] == "task-started" and kinds[-1] == "task-finished"
    tools = [(e.kind, e.data["name"]) for e in events if e.kind.startswith("tool-")]
    assert tools == [("tool-started", "write_file"), ("tool-finished", "write_file"),
                     ("tool-started", "run_command"), ("tool-finished", "run_command")]
    steps = [e.data["step"] for e in events if e.kind == "step-started"]
    assert steps == [1, 2, 3]
    (command,) = [e for e in events if e.kind == "tool-started" and e.data["command"]]
    assert (command.data["step"], command.data["command"]) == (2, "echo checked")
    assert events[-1].data["status"] == "completed"
    assert "turn-ended" in kinds and kinds.index("turn-ended") > kinds.index("step-started")
    latest = max(received - event.at for event, received in seen)
    assert latest <= WATCH_WITHIN_S
