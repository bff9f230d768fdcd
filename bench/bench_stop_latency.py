"""Benchmark: how long a stop request from another ledger connection takes to end a task
(target: within a second, as ``%mercury stop`` / the panel's Stop promise).

Run with ``python bench/bench_stop_latency.py [--runs N]``. Not part of the test suite
(the tests check that a stop is honoured; this measures how fast). Each run starts a task
through the runs layer with an in-process scripted model whose first step runs
``sleep 300``, waits until the command runs, then stores a stop request through a second
connection to the ledger, as another process would, and times until the task's outcome
(``aborted``, the command's process tree killed). The per-process stop poller finds the
request; its interval is ``POLL_S`` in ``mercury_nb/runs/stopping.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 1.0


async def one_run(folder: Path) -> float:
    from mercury_nb import runs
    from mercury_nb.contract.config import MercuryConfig
    from mercury_nb.ledger.store import Ledger
    from mercury_nb.testing import ScriptedModel, Turn, call

    workspace, home = folder / "ws", folder / "home"
    workspace.mkdir()
    model = ScriptedModel([
        Turn(tool_calls=(call("run_command", command="echo $$ > shell.pid; sleep 300"),)),
    ], name="scripted/bench-stop")
    config = MercuryConfig(workdir=workspace, home=home, model=model.name)
    run = await runs.start("Wait for a while.", config, model=model)
    if not isinstance(run, runs.Run):
        raise SystemExit(f"nothing started: {run.message}")
    deadline = time.monotonic() + 60
    while not (workspace / "shell.pid").exists():
        if time.monotonic() > deadline:
            raise SystemExit("the command never started")
        await asyncio.sleep(0.01)
    other = Ledger(home / "ledger.sqlite3")  # like another process: its own connection
    try:
        asked = time.monotonic()
        if not other.request_stop(run.task_id):
            raise SystemExit("the task was not running")
        await asyncio.wait({run.task}, timeout=60)  # never wait_for: it would cancel the task
        took = time.monotonic() - asked
    finally:
        other.close()
    if not run.task.done() or run.task.result().status != "aborted":
        raise SystemExit("the stop request was not honoured")
    return took


async def measure(runs_wanted: int) -> list[float]:
    from mercury_nb.ledger.access import close_all

    times = []
    for number in range(1, runs_wanted + 1):
        with tempfile.TemporaryDirectory(prefix="mercury-bench-stop-") as folder:
            seconds = await one_run(Path(folder))
            close_all()
        times.append(seconds)
        print(f"run {number}: {seconds * 1000:.0f} ms")
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="tasks to stop (default 10)")
    times = asyncio.run(measure(parser.parse_args().runs))
    median, worst = statistics.median(times), max(times)
    verdict = "OK" if worst <= TARGET_S else "OVER TARGET"
    print(f"median {median * 1000:.0f} ms, max {worst * 1000:.0f} ms over {len(times)} stops "
          f"(target: every one <= {TARGET_S * 1000:.0f} ms) {verdict}")
    return 0 if worst <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
