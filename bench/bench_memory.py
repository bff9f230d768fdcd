"""Benchmark: peak RSS over a 1,000-step scripted task with 200 KB tool outputs (target: flat
once compaction starts).

Run with ``python bench/bench_memory.py [--steps N] [--context-window T]``. Not part of the
test suite. An in-process model (it keeps no request) asks for ``read_file`` of one of 20
files of 200,000 chars at every step, then answers; the whole agent loop runs as usual
(tools, tool log, memory governor, stall watchdog). The memory governor budgets for
``--context-window`` tokens (400,000 by default; 0 means no window, so nothing is ever
compacted). Every 100 steps it prints the process RSS, the messages sent and their size;
at the end the peak RSS (``ru_maxrss``).
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import resource
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from mercury_nb.agent.events import AgentEvent, Notice
from mercury_nb.agent.memory import read_rss_mb
from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.recovery.compaction import SUMMARY_INSTRUCTIONS, message_chars
from mercury_nb.transport.protocol import (
    FinishChunk,
    ModelRequest,
    StreamChunk,
    TextChunk,
    ToolCallChunk,
)

FILES = 20
OUTPUT_CHARS = 200_000
REPORT_EVERY = 100


class ReadingModel:
    """Reads a file per step for ``steps - 1`` steps, then answers; writes summaries when the
    memory governor asks. Records only counts, never a request."""

    def __init__(self, steps: int) -> None:
        self.name = "bench/reading"
        self.steps = steps
        self.served = 0
        self.summaries = 0
        self.rows: list[tuple[int, float, int, int]] = []
        self.started = time.perf_counter()
        self.first_compaction: int | None = None

    def observe(self, event: AgentEvent) -> None:
        """Notes the step before which the governor first compacted."""
        if (
            self.first_compaction is None
            and isinstance(event, Notice)
            and event.text.startswith("Compacted")
        ):
            self.first_compaction = self.served + 1

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        return self._play(request)

    async def _play(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        if request.messages and request.messages[0].get("content") == SUMMARY_INSTRUCTIONS:
            self.summaries += 1
            yield TextChunk("Task: read the data files in turn.\nFiles touched: none.")
            yield FinishChunk("stop")
            return
        self.served += 1
        if self.served % REPORT_EVERY == 0 or self.served == 1:
            chars = sum(message_chars(m) for m in request.messages)
            rss = read_rss_mb() or 0.0
            self.rows.append((self.served, rss, len(request.messages), chars))
        if self.served >= self.steps:
            yield TextChunk("Every file holds fox rows.")
            yield FinishChunk("stop")
            return
        path = f"data{self.served % FILES}.txt"
        yield ToolCallChunk(0, f"call_{self.served}", "read_file", "")
        yield ToolCallChunk(0, None, None, f'{{"path": "{path}"}}')
        yield FinishChunk("tool_calls")


def make_workspace(root: Path) -> None:
    for index in range(FILES):
        line = f"row {index}: the quick brown fox jumps over the lazy dog\n"
        text = (line * (OUTPUT_CHARS // len(line) + 1))[:OUTPUT_CHARS]
        (root / f"data{index}.txt").write_text(text)


async def run(steps: int, window: int | None) -> ReadingModel:
    model = ReadingModel(steps)
    with tempfile.TemporaryDirectory(prefix="mercury-bench-memory-") as folder:
        root = Path(folder)
        make_workspace(root)
        config = MercuryConfig(
            workdir=root, model=model.name, max_steps=steps + 10, context_window=window,
            mode="chat",
        )
        outcome = await run_new_session(
            "What do the data files hold?", config, model=model, on_event=model.observe
        )
    print(f"outcome: {outcome.status} after {outcome.steps} steps, "
          f"{model.summaries} summaries, {time.perf_counter() - model.started:.1f} s")
    if model.first_compaction is not None:
        print(f"first compaction before step {model.first_compaction}")
    return model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--context-window", type=int, default=400_000)
    args = parser.parse_args()
    window = args.context_window or None

    machine = f"{platform.machine()} {platform.processor()}".strip()
    print(f"machine: {machine}, python {platform.python_version()}")
    print(f"{args.steps} steps, tool outputs of {OUTPUT_CHARS:,} chars, context window "
          f"{window if window else 'none (no compaction)'}")
    start_rss = read_rss_mb() or 0.0
    model = asyncio.run(run(args.steps, window))
    print(f"RSS before the task: {start_rss:.1f} MB")
    print("step   RSS MB   messages sent   chars sent")
    for step, rss, count, chars in model.rows:
        print(f"{step:>4}   {rss:>6.1f}   {count:>13}   {chars:>10,}")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS (ru_maxrss): {peak_mb:.1f} MB")


if __name__ == "__main__":
    main()
