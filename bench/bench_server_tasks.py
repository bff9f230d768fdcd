"""Benchmark: many tasks in one Jupyter server, through the panel's API, on a loopback model:
each task's per-step client gap at 20 at once against one alone, and the server loop's lag.

Run with ``python bench/bench_server_tasks.py [--tasks 20] [--steps 25] [--think 0.5] [--jitter
0.2]``. Not part of the test suite. It starts a ``jupyter lab`` as tests/browser does, with
``bench/loop_lag_probe.py`` loaded into it (a ``loop.call_later`` ticker every 10 ms noting how
late it ran), and one loopback OpenAI-compatible server (``mercury_nb.testing``) in this
process: each model ``tN`` has a script of ``read_file`` steps, each reply "thinking"
``--think`` seconds before its first token (``--jitter``: each a time drawn around it), then an
answer. Tasks are started with ``POST /mercury/api/tasks`` (``model: openai/tN``, each in its
own folder, the server's ``MERCURY_API_BASE`` the loopback's URL), as the panel starts them.
The per-step client gap is the time from the end of one streamed reply to the arrival of that
task's next request (the client's own work, and its waits for the server's loop); the lag is
read from the probe over the same window. First a task to warm the server up (its first task
imports what a task needs), then one task alone, then ``--tasks`` at once.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FILES = 50
"""Distinct files read in turn: a task re-reading one file would be paused as a loop."""
ENDS: dict[str, list[float]] = collections.defaultdict(list)
"""Per model: when the loopback server finished each streamed reply (monotonic)."""


def script(steps: int, think: float, jitter: float = 0.0, seed: str = "") -> list[Any]:
    """``steps`` replies, each thinking ``think`` seconds, or with ``jitter`` a time drawn
    evenly from ``think * (1 ± jitter)`` (seeded by ``seed``: the same run to run)."""
    from mercury_nb.testing import Stall, Turn, call

    draw = random.Random(seed)
    times = [think * (1 + jitter * (2 * draw.random() - 1)) for _ in range(steps)]
    return [*(Turn(tool_calls=(call("read_file", path=f"f{i % FILES}.txt"),),
                   fault=Stall(seconds=times[i])) for i in range(1, steps)),
            Turn(text="Done reading.", fault=Stall(seconds=times[0]))]


def time_reply_ends() -> None:
    """Note when each streamed reply ends, per model (the loopback handler, patched here)."""
    from mercury_nb.testing import loopback_http

    streamed = loopback_http.ChatCompletionsHandler._stream

    def timed(self: Any, turn: Any, number: int, body: dict[str, Any]) -> None:
        streamed(self, turn, number, body)
        ENDS[str(body.get("model"))].append(time.monotonic())

    loopback_http.ChatCompletionsHandler._stream = timed  # type: ignore[method-assign]


def lab_config(api_base: str) -> str:
    """Added to the test lab's config: the probe, and the loopback model's endpoint and key."""
    return (f"sys.path.insert(0, {str(ROOT / 'bench')!r})\n"
            "import os\n"
            f"os.environ['MERCURY_API_BASE'] = {api_base!r}\n"
            "os.environ['OPENAI_API_KEY'] = 'sk-bench'\n"
            "os.environ['MERCURY_PERMISSIONS'] = 'auto'\n"
            "os.environ['MERCURY_CONTEXT_WINDOW'] = '400000'\n"
            "c.ServerApp.jpserver_extensions = {'mercury_nb.server': True,"
            " 'loop_lag_probe': True}\n")


def lag(lab: Any, reset: bool = False) -> dict[str, Any]:
    url = f"{lab.base_url}bench-loop-lag?stacks=1" + ("&reset=1" if reset else "")
    with urllib.request.urlopen(url, timeout=10) as reply:
        return dict(json.loads(reply.read()))


def shown(seen: dict[str, Any]) -> str:
    """The probe's figures, and (``MERCURY_BENCH_SAMPLE=1``) where the loop spent its time."""
    lines = [f"max {seen['max_ms']:.1f} ms, p99 {seen['p99_ms']:.1f} ms, "
             f"{seen['over_50ms']} of {seen['ticks']} ticks over 50 ms; full garbage "
             f"collections (ms): {seen['full_gc_ms']}"]
    if seen.get("samples", {}).get("busy"):
        lines.append(f"    samples every 2 ms: {seen['samples']}")
    for label in ("busy", "blocked", "threads"):
        lines += [f"    {label} {count}: {where}" for where, count in seen.get(label, [])]
    return "\n".join(lines)


def gaps(server: Any, model: str) -> list[float]:
    """The client gaps (ms) of one task: each request's arrival after the previous reply's end."""
    arrivals = [at for at, body in zip(server.request_times, server.requests, strict=True)
                if body.get("model") == model]
    ends = ENDS[model]
    return [(arrivals[k + 1] - ends[k]) * 1000 for k in range(len(arrivals) - 1)]


def run_batch(lab: Any, server: Any, names: list[str], steps: int) -> dict[str, list[float]]:
    """Start one task per name at once through the panel's API; wait for all to finish."""
    ids = {}
    for name in names:
        folder = lab.root / name
        folder.mkdir()
        for index in range(FILES):
            (folder / f"f{index}.txt").write_text((f"file {index} fox " * 200)[:2000])
        reply = lab.api("tasks", {"task": "Read the files.", "model": f"openai/{name}",
                                  "workdir": name, "max_steps": steps + 5})
        ids[name] = reply["task_id"]
    deadline = time.monotonic() + 600
    for name, task_id in ids.items():
        while (task := lab.api(f"tasks/{task_id}")["task"])["status"] == "running":
            if time.monotonic() > deadline:
                raise SystemExit(f"task {name} still running")
            time.sleep(0.2)
        if task["status"] != "completed":
            raise SystemExit(f"task {name} ended {task['status']}: {task['banner']}")
    return {name: gaps(server, name) for name in names}


def describe(label: str, per_task: dict[str, list[float]]) -> tuple[float, float]:
    every = [gap for task in per_task.values() for gap in task]
    medians = [statistics.median(task) for task in per_task.values()]
    print(f"{label}: {len(per_task)} task(s), {len(every)} steps; per-step client gap "
          f"median {statistics.median(every):.1f} ms, mean {statistics.fmean(every):.1f}, "
          f"p95 {sorted(every)[int(0.95 * (len(every) - 1))]:.1f}, max {max(every):.1f}; "
          f"task medians {min(medians):.1f}–{max(medians):.1f} ms")
    return statistics.fmean(every), statistics.median(every)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--steps", type=int, default=25)
    parser.add_argument("--think", type=float, default=0.5)
    parser.add_argument("--jitter", type=float, default=0.0,
                        help="each reply thinks think * (1 ± jitter): 0 keeps the tasks in "
                             "step, every reply of a round ending within milliseconds")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "tests" / "browser"))
    import conftest  # the browser tests' lab

    from mercury_nb.testing import LoopbackServer

    print(f"machine: {platform.machine()}, python {platform.python_version()}, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; think "
          f"{args.think} s ± {args.jitter:.0%}")
    names = ["warm", "solo", *(f"t{n}" for n in range(args.tasks))]
    time_reply_ends()
    with LoopbackServer({name: script(args.steps, args.think, args.jitter, name)
                         for name in names}) as server:
        conftest.SCRIPTED_CONFIG += lab_config(server.url)
        with tempfile.TemporaryDirectory() as folder, conftest.running_lab(Path(folder)) as lab:
            lag(lab, reset=True)
            run_batch(lab, server, ["warm"], args.steps)  # the server's first task: imports
            alone = describe("alone", run_batch(lab, server, ["solo"], args.steps))
            print(f"  loop lag: {shown(lag(lab, reset=True))}")
            together = describe(f"{args.tasks} at once",
                                run_batch(lab, server, names[2:], args.steps))
            seen = lag(lab, reset=True)
            print(f"  loop lag: {shown(seen)}")
        if server.overruns or server.errors:
            raise SystemExit(f"loopback: {len(server.overruns)} overruns, {server.errors}")
    print(f"ratio of mean per-step client gap, {args.tasks} at once / alone: "
          f"{together[0] / alone[0]:.2f}× (target ≤ 1.3×), of medians "
          f"{together[1] / alone[1]:.2f}×; loop lag max {seen['max_ms']:.1f} ms "
          f"(target ≤ 50 ms), {seen['over_50ms']} of {seen['ticks']} ticks over 50 ms; "
          f"load average now {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
