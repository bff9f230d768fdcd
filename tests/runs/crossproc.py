"""Helpers for the runs tests: waiting on observable state (sync and async), CLI runs in real
processes, pid files, ledger reads."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mercury_nb.testing.orphans import alive

LONG_COMMAND = "sleep 300 & echo $! > child.pid; echo $$ > shell.pid; wait"
"""A command whose process tree (the shell and a background sleep) must be gone after a stop."""


RUNS_KEY = "sk-runs-test-0123456789"


def cli_env(home: Path, api_key: str = RUNS_KEY) -> dict[str, str]:
    """This environment without MERCURY_*, then the home, no retry wait and a test key."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MERCURY_")}
    env.update({"MERCURY_HOME": str(home), "MERCURY_RETRY_BASE_S": "0",
                "MERCURY_API_KEY": api_key})
    return env


def run_cli(*args: str, cwd: Path, home: Path, api_key: str = RUNS_KEY
            ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mercury_nb", *args], cwd=cwd,
                          env=cli_env(home, api_key), capture_output=True, text=True,
                          timeout=120)


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    """Poll observable state until ``condition`` holds; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        threading.Event().wait(0.02)


async def wait_for(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """:func:`wait_until` for a test on the event loop the task runs on (yields to it)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


async def ended(task: asyncio.Task[Any], what: str, timeout: float = 30.0) -> Any:
    """The task's result once it ended by itself. Never ``asyncio.wait_for``: its timeout
    cancels the task, which a run turns into an ``aborted`` outcome, so a stop that was
    never honoured would look honoured."""
    await asyncio.wait({task}, timeout=timeout)
    if not task.done():
        pytest.fail(f"timed out waiting for {what}")
    return task.result()


def query(home: Path, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Rows read by a separate read-only connection ([] before the ledger exists)."""
    path = home / "ledger.sqlite3"
    if not path.exists():
        return []
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    try:
        return conn.execute(sql, params).fetchall()
    except sqlite3.OperationalError:  # the schema is not there yet
        return []
    finally:
        conn.close()


def running_task(home: Path) -> str | None:
    rows = query(home, "SELECT id FROM tasks WHERE status = 'running'")
    return str(rows[0][0]) if len(rows) == 1 else None


def pid_in(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def stop_latency(home: Path, task_id: str) -> float:
    """Seconds from the stored stop request to the recorded end of the task."""
    ((requested, finished),) = query(
        home,
        "SELECT t.stop_requested_at, (SELECT MAX(at) FROM events e WHERE e.task_id = t.id "
        "AND e.kind = 'task-finished') FROM tasks t WHERE t.id = ?",
        (task_id,),
    )
    assert requested is not None and finished is not None
    return float(finished) - float(requested)  # type: ignore[arg-type]


def assert_stopped_like_the_stop_button(home: Path, workspace: Path, task_id: str) -> None:
    """Aborted after the request, the command's whole tree gone (how fast: bench/)."""
    wait_until(lambda: query(home, "SELECT status FROM tasks WHERE id = ?", (task_id,))
               == [("aborted",)], "the task to end aborted", timeout=10)
    ((verdict, status),) = query(home, "SELECT verdict, status FROM tasks WHERE id = ?",
                                 (task_id,))
    assert (verdict, status) == ("aborted", "aborted")
    assert stop_latency(home, task_id) >= 0  # the end was recorded after the request
    pids = [pid_in(workspace / "shell.pid"), pid_in(workspace / "child.pid")]
    assert all(pid is not None for pid in pids)
    wait_until(lambda: not any(alive(pid) for pid in pids if pid is not None),
               "the command's process tree to be gone", timeout=5)
