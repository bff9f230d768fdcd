"""The end-of-task notebook check runs in a tracked child process: a cancel ends it, kernel
and all, in bounded time."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import nbformat
import psutil
import pytest

from mercury_nb.agent.notebook_process import run_notebook_check
from mercury_nb.tools import processes


def notebook(path: Path, *cells: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(cell) for cell in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, str(path))
    return path


async def test_a_passing_and_a_failing_notebook(tmp_path: Path) -> None:
    good = notebook(tmp_path / "good.ipynb", "x = 1", "assert x == 1")
    bad = notebook(tmp_path / "bad.ipynb", "raise ValueError('nope')")
    ran = await run_notebook_check(good, 60, "good.ipynb", "nb-ok")
    assert (ran.ok, ran.detail) == (True, "2 cells ran without error")
    failed = await run_notebook_check(bad, 60, "bad.ipynb", "nb-bad")
    assert not failed.ok and "ValueError" in failed.detail
    assert processes.live_commands("nb-ok") == [] == processes.live_commands("nb-bad")


async def test_a_cancel_kills_the_check_and_its_kernel(tmp_path: Path) -> None:
    started = tmp_path / "started"
    path = notebook(tmp_path / "slow.ipynb",
                    f"open({str(started)!r}, 'w').close()\nimport time\ntime.sleep(300)")
    check = asyncio.create_task(run_notebook_check(path, 600, "slow.ipynb", "nb-stop"))
    deadline = time.monotonic() + 60
    while not started.exists():  # the kernel is running the cell
        assert time.monotonic() < deadline and not check.done()
        await asyncio.sleep(0.05)
    (tracked,) = processes.live_commands("nb-stop")
    running = processes.members([tracked])
    kernels = [p for p in running.values() if "ipykernel" in " ".join(p.cmdline())]
    assert kernels, "the kernel carries the registry's marker"
    stopped_at = time.monotonic()
    check.cancel()
    with pytest.raises(asyncio.CancelledError):
        await check
    assert time.monotonic() - stopped_at < 10
    alive = [(p.pid, p.status(), " ".join(p.cmdline())[:80]) for p in running.values()
             if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert alive == [], f"still running after the cancel: {alive}"
    assert processes.live_commands("nb-stop") == []
