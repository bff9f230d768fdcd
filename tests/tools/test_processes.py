"""run_command's process tree: setsid and orphaned children are killed on timeout, Stop,
task end and process exit, and the result says truthfully what was killed."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mercury_nb.testing.orphans import (
    ORPHAN_PID_FILE,
    alive,
    orphan_writer,
    read_pid,
    wait_until_gone,
)
from mercury_nb.tools import processes
from mercury_nb.tools.base import ToolContext, ToolResult
from mercury_nb.tools.registry import ToolRegistry


async def run(
    registry: ToolRegistry, ctx: ToolContext, command: str, **extra: object
) -> ToolResult:
    return await registry.execute("run_command", json.dumps({"command": command, **extra}), ctx)


def scoped(ctx: ToolContext, scope: str) -> ToolContext:
    return ToolContext(root=ctx.root, config=ctx.config, process_scope=scope)


async def test_timeout_kills_an_orphaned_setsid_child_and_names_it(
    registry: ToolRegistry, ctx: ToolContext, root: Path
) -> None:
    result = await run(registry, ctx, f"{orphan_writer()}; sleep 30", timeout_s=1)
    pid = read_pid(root / ORPHAN_PID_FILE, 5)
    assert wait_until_gone(pid), f"setsid child {pid} survived the timeout"
    assert result.timed_out
    assert "timed out after 1s — killed " in result.content
    assert str(pid) in result.content.splitlines()[-2]
    assert "could not be killed" not in result.content


async def test_stop_kills_an_orphaned_setsid_child(
    registry: ToolRegistry, ctx: ToolContext, root: Path
) -> None:
    task = asyncio.create_task(run(registry, ctx, f"{orphan_writer()}; sleep 30", timeout_s=60))
    pid = await asyncio.to_thread(read_pid, root / ORPHAN_PID_FILE)
    assert alive(pid)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert wait_until_gone(pid), f"setsid child {pid} survived the Stop"


async def test_a_finished_command_says_what_it_left_running_and_the_scope_kills_it(
    registry: ToolRegistry, ctx: ToolContext, root: Path
) -> None:
    result = await run(registry, scoped(ctx, "task-a"), f"{orphan_writer()}; echo started")
    pid = read_pid(root / ORPHAN_PID_FILE, 5)
    assert result.ok
    [note] = [line for line in result.content.splitlines() if "still running" in line]
    assert str(pid) in note and note.endswith("killed when the task ends]")
    assert processes.kill_scope("task-b") == processes.KillReport()  # another task's: kept
    assert alive(pid)
    report = await asyncio.to_thread(processes.kill_scope, "task-a")
    assert wait_until_gone(pid), f"setsid child {pid} survived the task's end"
    assert pid in report.killed and report.survived == ()
    assert processes.live_commands("task-a") == []


async def test_a_clean_command_is_not_tracked_after_it_exits(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    before = len(processes.live_commands())
    result = await run(registry, scoped(ctx, "clean"), "echo hi")
    assert result.content == "hi\nexit code: 0"
    assert len(processes.live_commands()) == before


def test_kill_report_describes_killed_and_survivors() -> None:
    assert processes.KillReport().describe() == "no process of it was left running"
    assert processes.KillReport((3, 1)).describe() == "killed 2 processes (pids 1, 3)"
    assert processes.KillReport((1,), (7,)).describe() == (
        "killed 1 process (pids 1); 1 process could not be killed and may still run (pids 7)"
    )


EXITING_PROGRAM = textwrap.dedent(
    """
    import asyncio, json, sys
    from mercury_nb.contract.config import MercuryConfig
    from mercury_nb.tools.base import ToolContext
    from mercury_nb.tools.registry import default_registry
    from mercury_nb.workspace.confinement import Workspace

    ctx = ToolContext(root=Workspace(sys.argv[1]), config=MercuryConfig(workdir=sys.argv[1]))
    args = json.dumps({"command": sys.argv[2]})
    print(asyncio.run(default_registry().execute("run_command", args, ctx)).content, flush=True)
    """
)


def test_process_exit_kills_what_its_commands_left_running(root: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", EXITING_PROGRAM, str(root), f"{orphan_writer()}; echo started"],
        capture_output=True, text=True, timeout=60,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == 0, done.stderr
    pid = read_pid(root / ORPHAN_PID_FILE, 5)
    assert wait_until_gone(pid), f"setsid child {pid} outlived the process (atexit)"
    assert "killed when the task ends" in done.stdout
