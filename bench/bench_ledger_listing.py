"""Benchmark: the panel's reads of a big ledger: the first page of 10,000 tasks, and the
detail of a task with 5,000 events (targets: ≤ 100 ms and ≤ 200 ms).

Run with ``python bench/bench_ledger_listing.py [--tasks N] [--events N] [--runs R]``. Not part
of the test suite. It fills a fresh ledger in a temporary home (``--tasks`` finished tasks,
one of them with ``--events`` progress events), then times, each ``--runs`` times, what the
server's handlers call: ``runs.list_tasks`` for the first page (50 tasks) and
``runs.task_detail`` plus its ``to_json()`` for the big task. The HTTP layer is not timed.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import tempfile
import time
from pathlib import Path


def fill(home: Path, workdir: Path, tasks: int, events: int) -> str:
    """A ledger of ``tasks`` finished tasks; returns the id of the one with ``events``."""
    from mercury_nb import runs
    from mercury_nb.contract.config import MercuryConfig
    from mercury_nb.ledger.records import TaskHeader

    handle = runs.ledger_for(MercuryConfig(workdir=workdir, home=home), lambda line: None)
    assert handle is not None
    ledger = handle.ledger
    big = ""
    for index in range(tasks):
        header = TaskHeader(f"{index:012x}", f"task number {index}", str(workdir), ("m",))
        ledger.start_task(header)
        if index == tasks // 2:
            big = header.id
            for start in range(0, events, 100):
                ledger.add_events(header, [
                    ("notice", f"note {n}", f'{{"text": "note {n}"}}')
                    for n in range(start, min(events, start + 100))])
        ledger.finish_task(header, status="completed", verdict="completed", banner="done",
                           blocker=None, changes="[]", evidence="[]", steps=3)
    handle.flush()
    return big


def timed(call: object, runs: int) -> list[float]:
    values = []
    for _ in range(runs):
        started = time.perf_counter()
        call()  # type: ignore[operator]
        values.append((time.perf_counter() - started) * 1000)
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=5_000)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    from mercury_nb import runs

    with tempfile.TemporaryDirectory(prefix="mercury-bench-listing-") as folder:
        home, workdir = Path(folder) / "home", Path(folder) / "ws"
        workdir.mkdir()
        started = time.perf_counter()
        big = fill(home, workdir, args.tasks, args.events)
        print(f"machine: {platform.machine()}, python {platform.python_version()}; "
              f"filled {args.tasks} tasks, {args.events} events in "
              f"{time.perf_counter() - started:.1f} s")
        page = timed(lambda: runs.list_tasks(limit=51, home=home), args.runs)
        assert len(runs.list_tasks(limit=51, home=home)) == 51

        def detail() -> None:
            found = runs.task_detail(big, home=home)
            assert found is not None and len(found.events) >= args.events
            found.to_json()

        shown = timed(detail, args.runs)
    for name, values in (("first page of the task list", page),
                         (f"detail of a task with {args.events} events", shown)):
        print(f"{name}: median {statistics.median(values):.1f} ms, min {min(values):.1f}, "
              f"max {max(values):.1f} over {len(values)} runs")


if __name__ == "__main__":
    main()
