"""Benchmark: how much of the prompt's prefix stays the same across a narration-guard cycle.

Run: ``python bench/bench_guard_prefix.py [--rounds N]``. A task runs against the loopback
server (``mercury_nb.testing.LoopbackServer``) with a model that never lands a change, so
the guard runs a whole cycle of forced rounds (the no-tool-support limit is raised so that
it does), in two scenarios: ``narrating`` (every reply is prose) and ``calling`` (each
round's forced step makes a mutating call that fails, and the round's next step, sent with
``tool_choice`` auto, is prose: what the real small model did). Every request body is kept.
A server with a prompt-prefix cache (llama.cpp's slot cache, vLLM's prefix caching)
re-processes a request from the first byte that differs from the previous one; the prompt
opens with the tools and then the messages, so each request is serialized as
``{"tools": …, "messages": …}`` and compared with the one before it.

Side by side, from the same run:

* ``before``: the requests as they were sent when a forced round offered only the 7
  mutating tools (``MUTATING_TOOLS``): the same bodies, with a forced request's tools cut to
  those, which is what that version sent;
* ``after``: the requests as sent now (every tool on every request).

Prints, per request, the bytes shared with the previous request's prefix and the bytes
re-processed, then the totals (about 4 bytes a token). Not part of the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.vocabulary import MUTATING_TOOLS
from mercury_nb.testing import LoopbackServer, Turn, call

TASK = "Create hello.py that prints hello world, and run it."
PROSE = (
    "```python\n# hello.py\ndef hello_world():\n    print(\"Hello, World!\")\n\nhello_world()\n"
    "```\n\nThis will print \"Hello, World!\" when you run `python hello.py`."
)
BYTES_PER_TOKEN = 4


def prompt_bytes(body: dict[str, Any]) -> bytes:
    """The request as a prompt starts: its tools, then its messages."""
    return json.dumps({"tools": body.get("tools") or [], "messages": body["messages"]},
                      ensure_ascii=False).encode()


def as_before(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` as the 7-tool guard sent it: a forced request offered the mutating tools only."""
    if body.get("tool_choice") != "required":
        return body
    tools = [t for t in body.get("tools") or [] if t["function"]["name"] in MUTATING_TOOLS]
    return {**body, "tools": tools}


def shared_prefix(a: bytes, b: bytes) -> int:
    limit = min(len(a), len(b))
    for index in range(limit):
        if a[index] != b[index]:
            return index
    return limit


def measure(bodies: list[dict[str, Any]]) -> list[tuple[int, int, str]]:
    """Per request: (bytes shared with the previous prompt, bytes re-processed, tool_choice)."""
    rows = []
    previous = b""
    for body in bodies:
        prompt = prompt_bytes(body)
        shared = shared_prefix(previous, prompt)
        rows.append((shared, len(prompt) - shared, str(body.get("tool_choice"))))
        previous = prompt
    return rows


def script_of(scenario: str, rounds: int) -> list[Turn]:
    if scenario == "narrating":
        return [Turn(text=PROSE) for _ in range(rounds + 1)]
    script = [Turn(text=PROSE)]
    for number in range(rounds):  # a different file each round: no doom loop
        edit = call("edit_file", path=f"hello{number}.py", old_text="pass", new_text="print(1)")
        script += [Turn(tool_calls=(edit,)), Turn(text="I'm sorry, the file is missing.")]
    return script


async def record_cycle(scenario: str, rounds: int) -> list[dict[str, Any]]:
    script = script_of(scenario, rounds)
    with tempfile.TemporaryDirectory() as folder, LoopbackServer(script) as server:
        config = MercuryConfig(
            workdir=Path(folder), model="bench", api_base=server.url, home=Path(folder) / "h",
            guard_rounds=min(5, rounds), guard_rounds_total=rounds,
            ignored_forcing_limit=rounds + 1, context_window=32_768,
        )
        outcome = await run_new_session(TASK, config)
        print(f"{scenario}: task ended {outcome.status}: {outcome.banner.splitlines()[0]}")
        return list(server.requests)


def report(scenario: str, bodies: list[dict[str, Any]]) -> None:
    before, after = measure([as_before(b) for b in bodies]), measure(bodies)
    print(f"{'request':>7} {'choice':>8} | {'before: shared':>15} {'re-processed':>12} | "
          f"{'after: shared':>14} {'re-processed':>12}")
    for number, (old, new) in enumerate(zip(before, after, strict=True), start=1):
        print(f"{number:>7} {new[2]:>8} | {old[0]:>15,} {old[1]:>12,} | {new[0]:>14,} "
              f"{new[1]:>12,}")
    guard = slice(1, None)  # the first request has no previous one to share with
    for label, rows in (("before", before), ("after", after)):
        shared = sum(r[0] for r in rows[guard])
        redone = sum(r[1] for r in rows[guard])
        print(f"{scenario}, {label}: over {len(rows) - 1} guard requests, {shared:,} bytes of "
              f"prefix kept, {redone:,} bytes re-processed (~{redone // BYTES_PER_TOKEN:,} "
              f"tokens, {shared / max(shared + redone, 1):.1%} kept)")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="guard rounds in the cycle")
    args = parser.parse_args()
    for scenario in ("narrating", "calling"):
        report(scenario, asyncio.run(record_cycle(scenario, args.rounds)))


if __name__ == "__main__":
    main()
