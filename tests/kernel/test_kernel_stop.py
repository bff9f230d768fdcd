"""After Stop, a kernel that ran a ``%%mercury`` task is free within 2 s, whatever the task
was blocked on: a server trickling bytes, a stream without end, a running command. The Stop
is a ``%mercury stop ID`` cell or the ``stop`` command of another process (as the panel's
server asks); "free" is the reply of the next cell, observed, never slept for."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.manager import start_new_kernel

from mercury_nb.testing import LoopbackServer, Turn
from mercury_nb.testing.orphans import alive
from tests.hostile.test_endings_stop import (
    BLOCKERS,
    SETTLE_S,
    STOP_BOUND_S,
    cli_env,
    pid_in,
    query,
    running_task,
    wait_until,
)

pytestmark = pytest.mark.kernel

STOPS = [pytest.param("stop-cell", id="stop-cell"),
         pytest.param("stop-command", id="stop-command")]


def run_cell(kc: Any, code: str, timeout: float = SETTLE_S) -> tuple[dict[str, Any], str]:
    """Executes ``code``; its reply and everything it printed or displayed as text."""
    shown: list[str] = []

    def hook(msg: dict[str, Any]) -> None:
        content = msg["content"]
        shown.append(str(content.get("text", "")))
        shown.append(str(content.get("data", {}).get("text/plain", "")))
        shown.append(str(content.get("evalue", "")))

    reply = kc.execute_interactive(code, timeout=timeout, output_hook=hook)
    return reply, "".join(shown)


@pytest.mark.parametrize("stop", STOPS)
@pytest.mark.parametrize("turn", BLOCKERS)
def test_stop_frees_the_kernel_within_2s(
    tmp_path: Path, loopback_server: Callable[..., LoopbackServer], turn: Turn, stop: str
) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    server = loopback_server([turn])
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(workspace), env=cli_env(home))
    try:
        reply, _ = run_cell(kc, "%load_ext mercury_nb")
        assert reply["content"]["status"] == "ok", reply["content"]
        reply, _ = run_cell(
            kc, f"%%mercury --permissions auto --model openai/m --api-base {server.url}"
                "\nwrite the notes")
        assert reply["content"]["status"] == "ok", reply["content"]  # the cell returned
        commanded = bool(turn.tool_calls)
        wait_until(lambda: running_task(home) is not None and bool(server.requests)
                   and (not commanded or pid_in(workspace / "shell.pid") is not None),
                   "the task to be blocked")
        task_id = running_task(home)
        assert task_id is not None
        started = time.time()
        if stop == "stop-cell":
            reply, printed = run_cell(kc, f"%mercury stop {task_id}")
            assert reply["content"]["status"] == "ok", (reply["content"], printed)
        else:
            asked = subprocess.run(
                [sys.executable, "-m", "mercury_nb", "stop", task_id], cwd=workspace,
                env=cli_env(home), capture_output=True, text=True, timeout=SETTLE_S)
            assert asked.returncode == 0, asked.stderr
            # the Stop is the moment the other process recorded it, not that process's start
            ((requested,),) = query(home, "SELECT stop_requested_at FROM tasks WHERE id = ?",
                                    (task_id,))
            started = float(requested)  # type: ignore[arg-type]
        wait_until(lambda: running_task(home) is None, "the task to end after the Stop")
        reply, printed = run_cell(kc, "print('free', 6 * 7)")
        took = time.time() - started
        assert reply["content"]["status"] == "ok" and "free 42" in printed, printed
        assert took < STOP_BOUND_S, f"the kernel was free {took:.2f} s after the Stop"
        ((status,),) = query(home, "SELECT status FROM tasks WHERE id = ?", (task_id,))
        assert status == "aborted"
        if commanded:
            for name in ("shell.pid", "child.pid"):
                pid = pid_in(workspace / name)
                assert pid is not None and not alive(pid), f"{name} outlived the Stop"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
