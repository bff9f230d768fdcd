"""A kernel that shuts down (a shutdown or restart request, SIGTERM, ``exit``) with a running task
records it ``aborted`` in the ledger, never ``running``, and kills its commands' trees."""

from __future__ import annotations

import os
import signal
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from mercury_nb.testing.orphans import alive

pytestmark = pytest.mark.kernel

LONG_COMMAND = "sleep 300 & echo $! > child.pid; echo $$ > shell.pid; wait"
SETUP = f'''
from mercury_nb.testing import Turn, call, register_scripted_model
register_scripted_model("scripted/sleepy", [
    Turn(tool_calls=(call("write_file", path="notes.txt", content="kept\\n"),
                     call("run_command", command={LONG_COMMAND!r}),)),
])
'''


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        threading.Event().wait(0.02)


def rows(home: Path, sql: str) -> list[tuple[object, ...]]:
    path = home / "ledger.sqlite3"
    if not path.exists():
        return []
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        conn.close()


def pid_in(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


@pytest.mark.parametrize("event", ["shutdown", "restart", "sigterm", "exit-cell"])
def test_a_kernel_shutting_down_records_its_running_task_aborted(tmp_path: Path,
                                                                 event: str) -> None:
    from jupyter_client.manager import KernelManager

    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MERCURY_")}
    env.update(MERCURY_HOME=str(home), MERCURY_API_KEY="sk-kernel-test-123",
               MERCURY_PLAIN="1", MERCURY_KERNEL_SHUTDOWN_GRACE_S="100")
    manager = KernelManager(kernel_name="python3")
    manager.shutdown_wait_time = 120  # a busy machine may need seconds to stop the task
    manager.start_kernel(cwd=str(workspace), env=env)
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        for code in ("%load_ext mercury_nb", SETUP,
                     "%%mercury --permissions auto --model scripted/sleepy\n"
                     "write notes, then wait"):
            reply = client.execute_interactive(code, timeout=60, output_hook=lambda msg: None)
            assert reply["content"]["status"] == "ok", reply["content"]
        wait_until(lambda: pid_in(workspace / "shell.pid") is not None
                   and pid_in(workspace / "child.pid") is not None
                   and rows(home, "SELECT status FROM tasks") == [("running",)],
                   "the kernel's command to run")
        pids = [pid_in(workspace / "shell.pid"), pid_in(workspace / "child.pid")]
        match event:
            case "shutdown":
                manager.shutdown_kernel(now=False)
            case "restart":
                manager.restart_kernel(now=False)
            case "sigterm":
                manager.signal_kernel(signal.SIGTERM)
            case "exit-cell":  # the kernel's loop stops, then the interpreter exits
                client.execute("exit")
        wait_until(lambda: rows(home, "SELECT status FROM tasks") != [("running",)],
                   "the task's row to be final", timeout=30)
        ((status, verdict, banner),) = rows(home, "SELECT status, verdict, banner FROM tasks")
        assert (status, verdict) == ("aborted", "aborted")
        if event in ("shutdown", "restart"):  # the loop still ran: ended by Stop, files listed
            assert str(banner).startswith("Stopped at your request"), banner
            assert "notes.txt" in str(banner)
        wait_until(lambda: not any(alive(pid) for pid in pids if pid is not None),
                   "the command's process tree to be gone", timeout=10)
        assert (workspace / "notes.txt").read_text() == "kept\n"
    finally:
        client.stop_channels()
        if manager.is_alive():
            manager.shutdown_kernel(now=True)
