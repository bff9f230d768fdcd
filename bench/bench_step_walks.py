"""Benchmark: messages the per-step prompt estimate measures, early and late in a long task.

Run with ``python bench/bench_step_walks.py [--steps N]`` for the checkout on ``sys.path``, or
compare checkouts side by side (each in a fresh process)::

    git worktree add ../before REV && python bench/bench_step_walks.py --compare ../before .

An in-process model asks for ``read_file`` of one of 50 files (2,000 chars each) at every
step, then answers; the whole loop runs (memory governor, window fit, tools). Every call of
the estimate's per-message measure (``message_chars`` as the memory governor module sees it)
is counted. Printed: messages measured and wall time per step over the first and the last
``--window`` steps. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

FILES = 50


class WalkModel:
    """A read_file call per step, recording the counter and the clock at each request."""

    def __init__(self, steps: int, counter: list[int]) -> None:
        self.name = "bench/walks"
        self.steps = steps
        self.counter = counter
        self.marks: list[tuple[int, float]] = []

    def stream(self, request: Any) -> AsyncIterator[Any]:
        return self._play()

    async def _play(self) -> AsyncIterator[Any]:
        from mercury_nb.transport.protocol import FinishChunk, TextChunk, ToolCallChunk

        self.marks.append((self.counter[0], time.perf_counter()))
        served = len(self.marks)
        yield TextChunk(f"step {served} ")
        if served >= self.steps:
            yield FinishChunk("stop")
            return
        yield ToolCallChunk(0, f"call_{served}", "read_file", "")
        yield ToolCallChunk(0, None, None, f'{{"path": "f{served % FILES}.txt"}}')
        yield FinishChunk("tool_calls")


def one_run(steps: int, window: int) -> tuple[float, float, float, float]:
    """(measured/step early, late, ms/step early, late)."""
    from mercury_nb.agent.task import run_new_session
    from mercury_nb.contract.config import MercuryConfig
    from mercury_nb.contract.recovery import memory_governor

    counter = [0]
    real = memory_governor.message_chars

    def counting(message: Any) -> int:
        counter[0] += 1
        return real(message)

    memory_governor.message_chars = counting  # type: ignore[assignment]
    with tempfile.TemporaryDirectory(prefix="mercury-bench-walks-") as folder:
        root = Path(folder)
        for index in range(FILES):
            (root / f"f{index}.txt").write_text((f"file {index} fox " * 200)[:2000])
        model = WalkModel(steps, counter)
        config = MercuryConfig(workdir=root, home=root / ".home", model=model.name,
                               max_steps=steps + 10, context_window=10_000_000)
        outcome = asyncio.run(run_new_session("Read the files.", config, model=model))
        assert outcome.steps == steps, (outcome.status, outcome.banner)
    marks = model.marks

    def rate(first: int) -> tuple[float, float]:
        (c0, t0), (c1, t1) = marks[first], marks[first + window]
        return (c1 - c0) / window, (t1 - t0) * 1000 / window

    early, late = rate(1), rate(len(marks) - 1 - window)
    return early[0], late[0], early[1], late[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--window", type=int, default=50)
    parser.add_argument("--compare", nargs="+", metavar="CHECKOUT")
    args = parser.parse_args()
    if args.compare:
        print(f"machine: {platform.machine()}, python {platform.python_version()}; "
              f"{args.steps} steps, read_file of 2,000 chars each")
        for path in (os.path.abspath(p) for p in args.compare):
            out = subprocess.run(
                [sys.executable, __file__, "--steps", str(args.steps), "--window",
                 str(args.window)], env={**os.environ, "PYTHONPATH": path},
                capture_output=True, text=True, check=True, cwd=path).stdout
            print(f"{path}: {out.strip()}")
        return
    early_n, late_n, early_ms, late_ms = one_run(args.steps, args.window)
    print(f"messages measured per step: first {args.window} steps {early_n:.1f}, "
          f"last {args.window} {late_n:.1f}; ms/step {early_ms:.2f} → {late_ms:.2f}")


if __name__ == "__main__":
    main()
