"""After Stop the CLI process that ran the task exits within 2 s, whatever the task was
blocked on: a server trickling bytes, a stream without end, a running command. Stop is the
``stop`` command of another process (measured from the request the ledger stored) or a
SIGTERM (measured from the signal); the exit is observed, never slept for."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import mercury_nb
from mercury_nb.testing import Endless, LoopbackServer, Trickle, Turn, call
from mercury_nb.testing.orphans import alive

STOP_BOUND_S = 2.0
SETTLE_S = 60.0
"""Longest wait for observable state (the CLI starting on a loaded machine, the request)."""
LONG_COMMAND = "sleep 300 & echo $! > child.pid; echo $$ > shell.pid; wait"
KEY = "sk-endings-test-0123456789"


def cli_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MERCURY_")}
    env.update({
        "MERCURY_HOME": str(home), "MERCURY_API_KEY": KEY, "MERCURY_RETRY_BASE_S": "0",
        # nothing but the Stop may end these tasks: no per-read timeout, deadline or cap
        "MERCURY_REQUEST_TIMEOUT_S": "120", "MERCURY_REQUEST_DEADLINE_S": "600",
        "MERCURY_REPLY_CHARS_PER_TOKEN": "100000", "MERCURY_SHUTDOWN_GRACE_S": "120",
        "PYTHONPATH": str(Path(mercury_nb.__file__).resolve().parents[1]),  # this checkout's
    })
    return env


def query(home: Path, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    path = home / "ledger.sqlite3"
    if not path.exists():
        return []
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    try:
        return conn.execute(sql, params).fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        conn.close()


def running_task(home: Path) -> str | None:
    rows = query(home, "SELECT id FROM tasks WHERE status = 'running'")
    return str(rows[0][0]) if len(rows) == 1 else None


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + SETTLE_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        threading.Event().wait(0.02)


def pid_in(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


class ExitWatch:
    """The wall-clock moment a process was seen to exit (a thread waits on it)."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.exited_at: float | None = None
        self.output: tuple[str, str] = ("", "")
        self._thread = threading.Thread(target=self._wait, daemon=True)
        self._thread.start()

    def _wait(self) -> None:
        self.process.wait()
        self.exited_at = time.time()
        self.output = self.process.communicate()

    def join(self, timeout_s: float) -> bool:
        self._thread.join(timeout_s)
        return self.exited_at is not None


BLOCKERS = [
    pytest.param(Turn("Writing the notes now, slowly", fault=Trickle(0.5, after_chunks=1)),
                 id="trickling-request"),
    pytest.param(Turn("Here it comes:", fault=Endless(every_s=0.01)), id="endless-stream"),
    pytest.param(Turn(tool_calls=(call("run_command", command=LONG_COMMAND),)),
                 id="running-command"),
]
STOPS = [pytest.param("stop-command", id="stop-command"),
         pytest.param("sigterm", id="sigterm")]


@pytest.mark.parametrize("stop", STOPS)
@pytest.mark.parametrize("turn", BLOCKERS)
def test_stop_ends_the_cli_process_within_2s(
    tmp_path: Path, loopback_server: Callable[..., LoopbackServer], turn: Turn, stop: str
) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    server = loopback_server([turn])
    process = subprocess.Popen(
        [sys.executable, "-m", "mercury_nb", "run", "write the notes", "--permissions", "auto",
         "--model", "openai/m",
         "--api-base", server.url, "--json"],
        cwd=workspace, env=cli_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )
    watch = ExitWatch(process)
    try:
        commanded = bool(turn.tool_calls)
        wait_until(lambda: running_task(home) is not None and bool(server.requests)
                   and (not commanded or pid_in(workspace / "shell.pid") is not None),
                   "the task to be blocked")
        task_id = running_task(home)
        assert task_id is not None and watch.exited_at is None
        if stop == "sigterm":
            stopped_at = time.time()
            os.kill(process.pid, signal.SIGTERM)
        else:
            asked = subprocess.run(
                [sys.executable, "-m", "mercury_nb", "stop", task_id], cwd=workspace,
                env=cli_env(home), capture_output=True, text=True, timeout=SETTLE_S)
            assert asked.returncode == 0, asked.stderr
            ((requested,),) = query(home, "SELECT stop_requested_at FROM tasks WHERE id = ?",
                                    (task_id,))
            stopped_at = float(requested)  # type: ignore[arg-type]
        assert watch.join(SETTLE_S), "the CLI process never exited after the Stop"
    finally:
        if process.poll() is None:
            process.kill()
            watch.join(SETTLE_S)
    assert watch.exited_at is not None
    latency = watch.exited_at - stopped_at
    stdout, stderr = watch.output
    assert latency <= STOP_BOUND_S, f"the process exited {latency:.2f}s after the Stop"
    assert process.returncode == 1, stderr
    assert '"status": "aborted"' in stdout
    assert query(home, "SELECT status FROM tasks WHERE id = ?", (task_id,)) == [("aborted",)]
    if commanded:
        pids = [pid_in(workspace / "shell.pid"), pid_in(workspace / "child.pid")]
        assert not [pid for pid in pids if pid is not None and alive(pid)], "command left"
