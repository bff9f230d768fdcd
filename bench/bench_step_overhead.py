"""Benchmark: the agent loop's per-step overhead, with the work ledger recording as the magic
and the CLI run it (tools, tool log, watchdog, memory governor, recorder, stop polling).

Run with ``python bench/bench_step_overhead.py [--steps N] [--repeats R]`` for the checkout
on ``sys.path``, or compare checkouts side by side in one run (runs alternate, each in a
fresh process)::

    git worktree add ../before HEAD~1 && python bench/bench_step_overhead.py --compare ../before .

An in-process model streams ``--chunks`` text chunks and one ``read_file`` call per step (a
60-byte file, a different one each step so no doom loop fires), then answers. The time per
step is the task's wall time divided by its steps: everything but the model itself. Beside
it, the bytes the process wrote per step (``/proc/self/io``), nearly all of them the
ledger's.
Not part of the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

FILES = 50


class BenchModel:
    """Streams ``chunks`` text chunks and a read_file call per step; answers at the end."""

    def __init__(self, steps: int, chunks: int) -> None:
        self.name = "bench/steps"
        self.steps = steps
        self.chunks = chunks
        self.served = 0

    def stream(self, request: Any) -> AsyncIterator[Any]:
        return self._play()

    async def _play(self) -> AsyncIterator[Any]:
        from mercury_nb.transport.protocol import FinishChunk, TextChunk, ToolCallChunk

        self.served += 1
        for index in range(self.chunks):  # different words every step: no near-duplicates
            yield TextChunk(f"{hash((self.served, index)) & 0xFFFFFF:x} ")
        if self.served >= self.steps:
            yield FinishChunk("stop")
            return
        yield ToolCallChunk(0, f"call_{self.served}", "read_file", "")
        yield ToolCallChunk(0, None, None, f'{{"path": "f{self.served % FILES}.txt"}}')
        yield FinishChunk("tool_calls")


def bytes_written() -> int:
    """Bytes this process has passed to write() so far (Linux ``/proc/self/io`` wchar; 0
    elsewhere): the ledger's writes, WAL and database, are nearly all of a task's."""
    try:
        for line in Path("/proc/self/io").read_text().splitlines():
            if line.startswith("wchar:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


async def one_run(steps: int, chunks: int) -> tuple[float, float]:
    """Seconds per step of one recorded task, and bytes written per step."""
    from mercury_nb.contract.config import MercuryConfig

    try:  # the runs layer plans and launches (and registers the task for remote stops)
        from mercury_nb.runs import launch
        from mercury_nb.runs.planning import plan_task
    except ImportError:  # older checkouts: the ledger planned and ran tasks
        from mercury_nb.ledger.runs import plan_task  # type: ignore[no-redef]

        launch = None  # type: ignore[assignment]
    from mercury_nb.ledger.access import close_all, open_ledger

    with tempfile.TemporaryDirectory(prefix="mercury-bench-steps-") as folder:
        root = Path(folder) / "ws"
        root.mkdir()
        for index in range(FILES):
            (root / f"f{index}.txt").write_text(f"file {index}: the quick brown fox\n")
        home = Path(folder) / "home"
        model = BenchModel(steps, chunks)
        config = MercuryConfig(workdir=root, home=home, model=model.name, mode="chat",
                               max_steps=steps + 10, context_window=10_000_000)
        handle = open_ledger(home)
        planned = plan_task(handle, f"read the files ({time.time()})", config)
        started, wrote = time.perf_counter(), bytes_written()
        if launch is not None:
            outcome = await launch(planned, sink=lambda event: None, model=model).outcome()
        else:
            outcome = await planned.run(lambda event: None, model=model)
        elapsed = time.perf_counter() - started
        handle.flush()
        close_all()
        wrote = bytes_written() - wrote
        assert outcome.steps == steps, (outcome.status, outcome.steps, outcome.banner)
    return elapsed / steps, wrote / steps


def measure(steps: int, chunks: int, repeats: int) -> list[tuple[float, float]]:
    """``repeats`` timed tasks after one untimed warm-up task (imports, litellm's model info)."""
    asyncio.run(one_run(10, chunks))
    return [asyncio.run(one_run(steps, chunks)) for _ in range(repeats)]


def compare(checkouts: list[str], args: argparse.Namespace) -> None:
    """Alternate fresh processes over ``checkouts`` (each first on PYTHONPATH)."""
    checkouts = [os.path.abspath(path) for path in checkouts]
    results: dict[str, list[tuple[float, float]]] = {path: [] for path in checkouts}
    for _ in range(args.rounds):
        for path in checkouts:
            env = {**os.environ, "PYTHONPATH": path}
            out = subprocess.run(
                [sys.executable, __file__, "--steps", str(args.steps), "--chunks",
                 str(args.chunks), "--repeats", str(args.repeats), "--raw"],
                env=env, capture_output=True, text=True, check=True, cwd=path,
            ).stdout
            results[path].extend((float(t), float(b)) for t, b in
                                 (pair.split(":") for pair in out.split()))
    for path, values in results.items():
        ms = [t * 1000 for t, _ in values]
        kb = statistics.median(b / 1024 for _, b in values)
        print(f"{path}: median {statistics.median(ms):.3f} ms/step, min {min(ms):.3f}, "
              f"max {max(ms):.3f} over {len(ms)} tasks of {args.steps} steps; "
              f"{kb:.1f} KiB written per step (median)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--chunks", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--raw", action="store_true", help="print seconds per step only")
    parser.add_argument("--compare", nargs="+", metavar="CHECKOUT")
    args = parser.parse_args()
    if args.compare:
        print(f"machine: {platform.machine()}, python {platform.python_version()}; "
              f"{args.steps} steps of {args.chunks} chunks + read_file, ledger recording")
        compare(args.compare, args)
        return
    values = measure(args.steps, args.chunks, args.repeats)
    if args.raw:
        print(" ".join(f"{t:.6f}:{b:.0f}" for t, b in values))
        return
    ms = [t * 1000 for t, _ in values]
    kb = statistics.median(b / 1024 for _, b in values)
    print(f"median {statistics.median(ms):.3f} ms/step over {len(ms)} tasks of {args.steps} "
          f"steps; {kb:.1f} KiB written per step")


if __name__ == "__main__":
    main()
