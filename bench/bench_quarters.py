"""Benchmark: time between requests by quarter of a long task, mercury-nb against a bare
litellm loop and a bare raw-httpx loop making the same requests, side by side in one run.

Run with ``python bench/bench_quarters.py [--steps N]``. Not part of the test suite. One
loopback OpenAI-compatible server (``mercury_nb.testing``) answers every client with the
same script: a ``read_file`` call of one of 50 files (2,000 chars) per step, then an answer.
The clients: the product (``run_new_session`` over its OpenAI-compatible transport), a loop
calling ``litellm.acompletion`` with streaming, and a loop posting the body with ``httpx``
and reading the SSE lines itself (the physical floor). For each, the server's arrival times
give the interval between consecutive requests (the server's own reading, parsing and
streaming is in all three alike), and the client gap, from the end of one reply to the
arrival of the next request (the client's own work: what the issue's flatness is about):
each's median per quarter of the task, the mean per step and the last quarter over the
first. The server keeps no request bodies (``keep_bodies=False``): kept, a 1,000-step task's
growing conversations filled this process's memory and its garbage collector's passes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
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


def run(client: Any, steps: int) -> tuple[list[float], list[float]]:
    """The intervals (ms) between consecutive requests of one client's task, and the
    client's gaps (ms): from the end of one reply to the arrival of the next request."""
    from mercury_nb.testing.loopback_server import LoopbackServer

    with tempfile.TemporaryDirectory(prefix="mercury-bench-quarters-") as folder:
        root = Path(folder)
        for index in range(FILES):
            (root / f"f{index}.txt").write_text((f"file {index} fox " * 200)[:2000])
        with LoopbackServer(script(steps), keep_bodies=False) as server:
            asyncio.run(client(server.url, root, steps))
            times, ends = list(server.request_times), list(server.reply_ends)
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
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # as the product: no fetch
    print(f"machine: {platform.machine()}, python {platform.python_version()}; "
          f"{args.steps} read_file steps against one loopback server")
    rows = {}
    for client in (CLIENTS[name] for name in args.clients):
        run(client, 12)  # warm-up: imports, litellm's model map
        rows[client.__name__] = run(client, args.steps)
    for index, label in ((0, "interval"), (1, "client gap")):
        base = {name: statistics.mean(rows[name][index])
                for name in ("bare_httpx", "bare_litellm") if name in rows}
        for name, measured in rows.items():
            print(quarters_line(name, label, measured[index], base))

if __name__ == "__main__":
    main()
