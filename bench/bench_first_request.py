"""Benchmark: cold start to the first model request, mercury-nb against a bare openai-SDK script.

Run: ``python bench/bench_first_request.py [--runs N] [--python PY]``. One loopback server
(``mercury_nb.testing.LoopbackServer``, OpenAI's streaming protocol on 127.0.0.1) serves
every run; the time of a run is from just before its process (or cell) starts to the moment
the server receives the first chat-completions request (``time.monotonic()``, one clock for
all processes on Linux). Side by side, in rotation, each round:

* ``bare``: a fresh interpreter running a minimal script that imports ``openai`` and
  streams one reply with ``AsyncOpenAI`` (the reference);
* ``cli``: ``python -m mercury_nb run TASK --chat --model openai/m --api-base URL`` in a
  fresh process (with its own empty ``MERCURY_HOME`` and workspace);
* ``cell``: a fresh Jupyter kernel (started and idle, not timed), then ``%load_ext
  mercury_nb`` and a first ``%%mercury --model openai/m --api-base URL`` cell, timed from the
  moment the ``%load_ext`` cell is sent; the kernel's own start is reported beside it.

``--python`` picks the interpreter for all three (e.g. another checkout's venv, to measure
before and after). Prints every run, the medians and the ratios to the bare script (target:
within 1.2x, issue 22). Not part of the test suite.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from mercury_nb.testing import LoopbackServer, Turn

TARGET_RATIO = 1.2
TIMEOUT_S = 120.0

BARE = """
import asyncio, sys
from openai import AsyncOpenAI

async def main():
    client = AsyncOpenAI(base_url=sys.argv[1], api_key="not-needed", max_retries=0)
    stream = await client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "say hi"}], stream=True)
    async for _ in stream:
        pass

asyncio.run(main())
"""


def _wait_for_request(server: LoopbackServer, before: int, started: float) -> float:
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        if len(server.request_times) > before:
            return server.request_times[before] - started
        time.sleep(0.005)
    raise TimeoutError("no model request arrived")


def _env(home: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MERCURY_")}
    # a placeholder key: the loopback server ignores it, and litellm (before) demands one
    env.update(MERCURY_HOME=home, PYTHONDONTWRITEBYTECODE="1", OPENAI_API_KEY="sk-bench-none")
    return env


def run_process(server: LoopbackServer, argv: list[str], home: str, cwd: str) -> float:
    before = len(server.request_times)
    started = time.monotonic()
    process = subprocess.Popen(argv, cwd=cwd, env=_env(home), stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    try:
        return _wait_for_request(server, before, started)
    finally:
        _, err = process.communicate(timeout=TIMEOUT_S)
        if process.returncode not in (0,):
            print(f"  (exit {process.returncode}: {err.strip()[-300:]})")


def run_bare(server: LoopbackServer, python: str, home: str, cwd: str) -> float:
    return run_process(server, [python, "-c", BARE, server.url], home, cwd)


def run_cli(server: LoopbackServer, python: str, home: str, cwd: str) -> float:
    argv = [python, "-m", "mercury_nb", "run", "say hi", "--chat", "--model", "openai/m",
            "--api-base", server.url, "--workdir", cwd]
    return run_process(server, argv, home, cwd)


def run_cell(server: LoopbackServer, python: str, home: str, cwd: str) -> tuple[float, float]:
    """(first %%mercury cell -> request, kernel start -> idle)."""
    from jupyter_client.manager import KernelManager

    manager = KernelManager(kernel_cmd=[python, "-m", "ipykernel_launcher", "-f",
                                        "{connection_file}"])
    started = time.monotonic()
    manager.start_kernel(cwd=cwd, env=_env(home))
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=TIMEOUT_S)
        kernel_s = time.monotonic() - started
        before = len(server.request_times)
        cell_started = time.monotonic()
        client.execute("%load_ext mercury_nb")
        client.execute(f"%%mercury --chat --model openai/m --api-base {server.url}\nsay hi")
        seconds = _wait_for_request(server, before, cell_started)
        client.execute("import time; time.sleep(0.5)", reply=True, timeout=TIMEOUT_S)
        return seconds, kernel_s
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--python", default=sys.executable, help="interpreter to measure")
    parser.add_argument("--no-cell", action="store_true", help="skip the kernel cell")
    args = parser.parse_args()
    results: dict[str, list[float]] = {"bare": [], "cli": [], "cell": []}
    kernel_starts: list[float] = []
    turns = [Turn("hi")] * (args.runs * 3 + 3)
    kinds: list[tuple[str, Callable[..., float]]] = [("bare", run_bare), ("cli", run_cli)]
    with LoopbackServer(turns) as server, tempfile.TemporaryDirectory() as scratch:
        # one warm-up of each (disk cache), not counted
        run_bare(server, args.python, scratch, scratch)
        run_cli(server, args.python, scratch, scratch)
        for number in range(1, args.runs + 1):
            line = [f"round {number}:"]
            for kind, runner in kinds:
                home = tempfile.mkdtemp(dir=scratch)
                seconds = runner(server, args.python, home, home)
                results[kind].append(seconds)
                line.append(f"{kind} {seconds:.2f} s")
            if not args.no_cell:
                home = tempfile.mkdtemp(dir=scratch)
                seconds, kernel_s = run_cell(server, args.python, home, home)
                results["cell"].append(seconds)
                kernel_starts.append(kernel_s)
                line.append(f"cell {seconds:.2f} s (kernel start {kernel_s:.2f} s)")
            print("  ".join(line), flush=True)
    bare = statistics.median(results["bare"])
    print(f"python: {args.python} ({Path(args.python).resolve()})")
    print(f"median bare openai script: {bare:.2f} s")
    ok = True
    for kind in ("cli", "cell"):
        if not results[kind]:
            continue
        median = statistics.median(results[kind])
        ratio = median / bare
        ok = ok and ratio <= TARGET_RATIO
        print(f"median {kind}: {median:.2f} s = {ratio:.2f}x bare (target <= {TARGET_RATIO}x)")
    if kernel_starts:
        print(f"median kernel start (not in 'cell'): {statistics.median(kernel_starts):.2f} s")
    print("OK" if ok else "OVER TARGET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
