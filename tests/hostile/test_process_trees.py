"""Killing a big process tree is linear and bounded: hundreds of orphaned (double-forked,
``setsid``) children are all killed within a bound on Stop, on a timeout and at the task's
end; the table is scanned a fixed number of times, never once per round of the wait; and
what cannot be killed is reported as surviving, not waited for."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.testing.orphans import alive
from mercury_nb.tools import processes
from mercury_nb.tools.base import ToolContext, ToolResult
from mercury_nb.tools.registry import default_registry
from mercury_nb.workspace.confinement import Workspace

ORPHANS = 400
KILL_BOUND_S = 10.0
"""Generous for a loaded 2-core machine; the kill took ~20 s for 400 when every round
scanned the table once per process (65 s for 800)."""

LISTER = textwrap.dedent(
    """
    import os, sys
    count, out = int(sys.argv[1]), sys.argv[2]
    with open(out, "w") as pids:
        for _ in range(count):
            read, write = os.pipe()
            if os.fork() == 0:
                os.close(read)
                os.setsid()
                pid = os.fork()
                if pid == 0:
                    os.close(write)
                    os.execvp("sleep", ["sleep", "300"])
                os.write(write, b"%d\\n" % pid)
                os._exit(0)
            os.close(write)
            pids.write(os.read(read, 64).decode())
            pids.flush()
            os.close(read)
            os.wait()
    os.rename(out, out + ".done")
    """
)
"""Starts ``count`` orphaned sleeps and lists their pids in ``out`` (``out.done`` at the end)."""


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    (tmp_path / "lister.py").write_text(LISTER)
    return ToolContext(root=Workspace(tmp_path), config=MercuryConfig(workdir=tmp_path),
                       process_scope="tree-task")


@pytest.fixture(autouse=True)
def no_leftovers() -> Iterator[None]:
    yield
    processes.kill_all()  # whatever a failed test left behind


def make_orphans(count: int) -> str:
    return f"{sys.executable} lister.py {count} pids >/dev/null 2>&1"


def listed(root: Path) -> list[int]:
    for name in ("pids.done", "pids"):
        if (root / name).exists():
            return [int(line) for line in (root / name).read_text().split()]
    return []


async def run(ctx: ToolContext, command: str, **extra: Any) -> ToolResult:
    return await default_registry().execute("run_command",
                                            json.dumps({"command": command, **extra}), ctx)


async def until_listed(root: Path, count: int) -> None:
    end = time.monotonic() + 120
    while not (root / "pids.done").exists():
        assert time.monotonic() < end, "the orphans were never all started"
        await asyncio.sleep(0.05)
    assert len(listed(root)) == count


def assert_all_gone(pids: list[int]) -> None:
    assert pids
    end = time.monotonic() + 5
    while (running := [pid for pid in pids if alive(pid)]) and time.monotonic() < end:
        time.sleep(0.05)
    assert not running, f"{len(running)} of {len(pids)} orphans survived"


async def test_stop_kills_hundreds_of_orphans_within_the_bound(
    ctx: ToolContext, tmp_path: Path
) -> None:
    task = asyncio.create_task(run(ctx, f"{make_orphans(ORPHANS)}; sleep 300", timeout_s=600))
    await until_listed(tmp_path, ORPHANS)
    stopped = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    took = time.monotonic() - stopped
    assert took <= KILL_BOUND_S, f"Stop took {took:.1f}s to kill {ORPHANS} orphans"
    assert_all_gone(listed(tmp_path))


async def test_a_timeout_kills_hundreds_of_orphans_within_the_bound(
    ctx: ToolContext, tmp_path: Path
) -> None:
    # the timeout may strike while orphans are still being started: the maker is frozen too
    started = time.monotonic()
    result = await run(ctx, f"{make_orphans(ORPHANS)}; sleep 300", timeout_s=3)
    took = time.monotonic() - started
    assert result.timed_out
    assert took <= 3 + KILL_BOUND_S, f"the command returned {took:.1f}s after it started"
    pids = listed(tmp_path)
    assert_all_gone(pids)
    assert "timed out after 3s — killed " in result.content
    assert "could not be killed" not in result.content


async def test_the_task_end_kills_hundreds_of_orphans_within_the_bound(
    ctx: ToolContext, tmp_path: Path
) -> None:
    result = await run(ctx, f"{make_orphans(ORPHANS)}; echo started")
    assert result.ok and f"[{ORPHANS} background processes it started" in result.content
    pids = listed(tmp_path)
    ended = time.monotonic()
    report = await asyncio.to_thread(processes.kill_scope, "tree-task")
    took = time.monotonic() - ended
    assert took <= KILL_BOUND_S, f"the task's end took {took:.1f}s to kill {ORPHANS} orphans"
    assert set(pids) <= set(report.killed) and report.survived == ()
    assert_all_gone(pids)


class ScanCounter:
    """Counts full reads of the process table: psutil.process_iter, and the ppid map that
    psutil's children() builds from the whole table on every call."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.scans = 0
        for owner, name in ((psutil, "process_iter"), (psutil, "_ppid_map")):
            real = getattr(owner, name)

            def counted(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
                self.scans += 1
                return _real(*args, **kwargs)

            monkeypatch.setattr(owner, name, counted)


async def test_the_wait_never_scans_the_table_per_round_and_a_survivor_is_named(
    ctx: ToolContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = await run(ctx, f"{make_orphans(20)}; echo started")
    assert result.ok
    pids = listed(tmp_path)
    stubborn = pids[0]
    real_signal = processes._signal

    def refuse_to_die(proc: psutil.Process, sig: int) -> None:
        if proc.pid == stubborn and sig == signal.SIGKILL:
            return  # as a process we may not kill: it outlives every round of the wait
        real_signal(proc, sig)

    monkeypatch.setattr(processes, "_signal", refuse_to_die)
    counter = ScanCounter(monkeypatch)
    started = time.monotonic()
    report = processes.kill_scope("tree-task", grace_s=1.0)  # ~50 rounds of the wait
    took = time.monotonic() - started
    monkeypatch.undo()
    os.kill(stubborn, signal.SIGKILL)
    assert counter.scans <= 4, f"{counter.scans} full scans of the process table"
    assert report.survived == (stubborn,)
    assert set(pids) - {stubborn} <= set(report.killed)
    assert took < 1.0 + KILL_BOUND_S
    assert "1 process could not be killed and may still run (pids " in report.describe()
    assert_all_gone(pids)
