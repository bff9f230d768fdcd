"""Runs the end-of-task notebook check in a child process the process registry tracks.

nbclient in a thread cannot be cancelled: a Stop or a SIGTERM during the check left the thread
and its kernel running. In a child process (its own session, carrying the registry's marker,
which the kernel it starts inherits), a cancel kills the check and its kernel at once, and
:func:`mercury_nb.tools.processes.kill_all` finds them at exit.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.tools import processes
from mercury_nb.tools.command_launch import SandboxUnavailable, prepare
from mercury_nb.workspace.notebook_check import DEFAULT_MAX_BYTES, NotebookRun

DIED = "the notebook check stopped without a result (exit code {code})"


async def run_notebook_check(path: Path, timeout_s: float, display: str,
                             scope: str | None, *, root: Path | None = None,
                             max_bytes: int = DEFAULT_MAX_BYTES,
                             config: MercuryConfig | None = None) -> NotebookRun:
    """Execute ``path`` top to bottom in a fresh kernel, in a child process under ``scope``
    (the task id): cancelling this kills the child and its kernel before it re-raises.
    The child reads the notebook within ``max_bytes``, through no link leaving ``root``.
    It starts as every command does (:func:`~mercury_nb.tools.command_launch.prepare`:
    without the secrets, in ``config``'s sandbox, whose writable folder is ``root``)."""
    bounds = [str(root), str(max_bytes)] if root is not None else []
    argv = (sys.executable, "-m", "mercury_nb.workspace.notebook_check",
            str(path), repr(timeout_s), display, *bounds)
    try:
        launch = prepare(argv, config or MercuryConfig(), root or path.parent)
    except SandboxUnavailable as error:
        return NotebookRun(display, False, str(error))
    tracked = processes.register(scope)
    try:
        proc = await asyncio.create_subprocess_exec(
            *launch.argv,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, start_new_session=True,
            env=tracked.environment(launch.env),
        )
        tracked.attach(proc.pid)
        out, _ = await proc.communicate()
    except BaseException:
        processes.end_now(tracked)
        raise
    await processes.end_off_loop(tracked)  # a kernel the check left behind
    lines = out.decode(errors="replace").strip().splitlines()
    try:
        data = json.loads(lines[-1])
        return NotebookRun(display, bool(data["ok"]), str(data["detail"]))
    except (IndexError, ValueError, KeyError, TypeError):
        return NotebookRun(display, False, DIED.format(code=proc.returncode))
