"""Benchmark: time between requests by quarter of a long task, mercury-nb against a bare
litellm loop and a bare raw-httpx loop making the same requests, side by side in one run.

Run with ``python bench/bench_quarters.py [--steps N] [--server process|thread]``. Not part
of the test suite. One loopback OpenAI-compatible server (``mercury_nb.testing``), in a process
of its own (or, ``--server thread``, in this one), answers every client with the
same script: a ``read_file`` call of one of 50 files (2,000 chars) per step, then an answer.
The clients: the product (``run_new_session`` over its OpenAI-compatible transport), a loop
calling ``litellm.acompletion`` with streaming, and a loop posting the body with ``httpx``
and reading the SSE lines itself (the physical floor). For each, the server's arrival times
give the interval between consecutive requests (the server's own reading, parsing and
streaming is in all three alike), and the client gap, from the end of one reply to the
arrival of the next request (the client's own work: what the issue's flatness is about):
each's median per quarter of the task, the mean per step and the last quarter over the
first. The server keeps no request bodies (``keep_bodies=False``): kept, a 1,000-step task's
growing conversations filled its memory and its garbage collector's passes. In a thread, the
server's parsing of each growing body took turns of the GIL from the client; its client gaps
grew with the conversation for that reason as well.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from itertools import pairwise
from pathlib import Path
from typing import Any

FILES = 50
MODEL = "mercury-test"


def script(steps: int) -> list[Any]:
    from mercury_nb.testing import Turn, call

    return [*(Turn(tool_calls=(call("read_file", path=f"f{i % FILES}.txt"),))
              for i in range(1, steps)), Turn(text="Done reading.")]


def system_and_task(root: Path) -> list[dict[str, Any]]:
    from mercury_nb.agent.prompts import system_message, user_message

    return [system_message(str(root), "execute"), user_message("Read the files.")]


def read(root: Path, arguments: str) -> str:
    return (root / json.loads(arguments or "{}")["path"]).read_text()


async def product(url: str, root: Path, steps: int) -> None:
    from mercury_nb.agent.task import run_new_session
    from mercury_nb.contract.config import MercuryConfig
    from mercury_nb.transport.openai_model import OpenAIModel

    model = OpenAIModel(f"openai/{MODEL}", MODEL, url, "sk-test", 30)
    config = MercuryConfig(workdir=root, home=root / ".home", model=model.name,
                           max_steps=min(steps + 10, 1000), context_window=10_000_000)
    outcome = await run_new_session("Read the files.", config, model=model)
    assert outcome.steps == steps, (outcome.status, outcome.banner)


async def bare_litellm(url: str, root: Path, steps: int) -> None:
    import litellm

    from mercury_nb.tools.registry import default_registry

    tools, messages = list(default_registry().schemas(None)), system_and_task(root)
    for _ in range(steps):
        stream = await litellm.acompletion(model=f"openai/{MODEL}", api_base=url,
                                           api_key="sk-test", messages=messages,
                                           tools=tools, stream=True)
        text, call_id, arguments = "", None, ""
        async for chunk in stream:
            delta = chunk.choices[0].delta
            text += delta.content or ""
            for call in delta.tool_calls or ():
                call_id = call.id or call_id
                arguments += call.function.arguments or ""
        if call_id is None:
            return
        messages.append({"role": "assistant", "content": text or None, "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": "read_file", "arguments": arguments}}]})
        messages.append({"role": "tool", "tool_call_id": call_id,
                         "content": read(root, arguments)})


async def bare_httpx(url: str, root: Path, steps: int) -> None:
    import httpx

    from mercury_nb.tools.registry import default_registry

    tools, messages = list(default_registry().schemas(None)), system_and_task(root)
    async with httpx.AsyncClient(timeout=30) as client:
        for _ in range(steps):
            body = {"model": MODEL, "messages": messages, "tools": tools, "stream": True}
            text, call_id, arguments = "", None, ""
            async with client.stream("POST", f"{url}/chat/completions", json=body,
                                     headers={"Authorization": "Bearer sk-test"}) as reply:
                async for line in reply.aiter_lines():
                    if not line.startswith("data: ") or line == "data: [DONE]":
                        continue
                    choices = json.loads(line[6:]).get("choices") or [{}]
                    delta = choices[0].get("delta") or {}
                    text += delta.get("content") or ""
                    for call in delta.get("tool_calls") or ():
                        call_id = call.get("id") or call_id
                        arguments += (call.get("function") or {}).get("arguments") or ""
            if call_id is None:
                return
            messages.append({"role": "assistant", "content": text or None, "tool_calls": [
                {"id": call_id, "type": "function",
                 "function": {"name": "read_file", "arguments": arguments}}]})
            messages.append({"role": "tool", "tool_call_id": call_id,
                             "content": read(root, arguments)})


def serve(steps: int) -> None:
    """``--serve N``: the loopback server in this process; its URL on the first line of
    stdout, then, when stdin closes, its arrival and reply-end times as one JSON line."""
    from mercury_nb.testing.loopback_server import LoopbackServer

    with LoopbackServer(script(steps), keep_bodies=False) as server:
        print(server.url, flush=True)
        sys.stdin.read()
        print(json.dumps([server.request_times, server.reply_ends]), flush=True)


def served(client: Any, root: Path, steps: int, where: str) -> tuple[list[float], list[float]]:
    """Run ``client`` against a loopback server in this process (``thread``) or in a process
    of its own (``process``: its parsing of each growing body, and the freeing of it after
    the reply, then take no turns of this process's GIL from the client). Both read
    ``time.monotonic()``, one clock for every process of the machine. The server process
    imports ``mercury_nb`` from this script's checkout, so that ``PYTHONPATH=<another
    checkout>`` compares that version's client against the same server."""
    if where == "thread":
        from mercury_nb.testing.loopback_server import LoopbackServer

        with LoopbackServer(script(steps), keep_bodies=False) as server:
            asyncio.run(client(server.url, root, steps))
            return list(server.request_times), list(server.reply_ends)
    checkout = str(Path(__file__).resolve().parents[1])  # the server of this script's checkout,
    env = {**os.environ, "PYTHONPATH": checkout}  # whichever version the clients import
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(steps)], env=env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert server.stdin is not None and server.stdout is not None
    try:
        asyncio.run(client(server.stdout.readline().strip(), root, steps))
        server.stdin.close()
        times, ends = json.loads(server.stdout.readline())
    finally:
        server.kill()
        server.wait()
    return times, ends


def run(client: Any, steps: int, where: str = "process") -> tuple[list[float], list[float]]:
    """The intervals (ms) between consecutive requests of one client's task, and the
    client's gaps (ms): from the end of one reply to the arrival of the next request."""
    with tempfile.TemporaryDirectory(prefix="mercury-bench-quarters-") as folder:
        root = Path(folder)
        for index in range(FILES):
            (root / f"f{index}.txt").write_text((f"file {index} fox " * 200)[:2000])
        times, ends = served(client, root, steps, where)
    assert len(times) == steps == len(ends), (client.__name__, len(times), len(ends))
    return ([(b - a) * 1000 for a, b in pairwise(times)],
            [(arrived - ended) * 1000 for ended, arrived in zip(ends, times[1:], strict=False)])


def quarters_line(name: str, label: str, values: list[float], base: dict[str, float]) -> str:
    size = len(values) // 4
    quarters = [statistics.median(values[i * size:(i + 1) * size]) for i in range(4)]
    mean = statistics.mean(values)
    ratios = "".join(f", {mean / value:.2f}× {other.removeprefix('bare_')}"
                     for other, value in base.items())
    return (f"{name:13} {label} quarters (median ms): " + " / ".join(f"{q:.1f}" for q in quarters)
            + f"; mean {mean:.1f} ms/step{ratios}; last/first {quarters[3] / quarters[0]:.2f}×")


CLIENTS = {"bare_httpx": bare_httpx, "bare_litellm": bare_litellm, "product": product}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=240)
    parser.add_argument("--clients", nargs="+", default=list(CLIENTS), choices=list(CLIENTS))
    parser.add_argument("--server", choices=("process", "thread"), default="process",
                        help="where the loopback server runs (thread: in this process)")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        serve(args.serve)
        return
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # as the product: no fetch
    print(f"machine: {platform.machine()}, python {platform.python_version()}; "
          f"{args.steps} read_file steps against one loopback server ({args.server})")
    rows = {}
    for client in (CLIENTS[name] for name in args.clients):
        run(client, 12, args.server)  # warm-up: imports, litellm's model map
        rows[client.__name__] = run(client, args.steps, args.server)
    for index, label in ((0, "interval"), (1, "client gap")):
        base = {name: statistics.mean(rows[name][index])
                for name in ("bare_httpx", "bare_litellm") if name in rows}
        for name, measured in rows.items():
            print(quarters_line(name, label, measured[index], base))

if __name__ == "__main__":
    main()
