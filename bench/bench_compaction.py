"""Benchmark: head+tail compaction of a 5,000-message conversation (target: median <= 50 ms).

Run with ``python bench/bench_compaction.py [--runs N]``. Not part of the test suite.
The conversation mixes assistant tool calls, tool results (every third one 200 KB, the
rest 1-20 KB) and assistant texts (300 chars to 12 KB). Each run compacts the same
uncompacted list (the input is never mutated); the median wall time is printed, with
the token estimate and summary planning timed alongside for reference.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.recovery.compaction import compact_messages, plan_summary
from mercury_nb.contract.recovery.memory_governor import estimate_tokens

MESSAGES = 5_000
BIG_RESULT_CHARS = 200_000


def _text(size: int, seed: int) -> str:
    unit = f"line {seed}: the quick brown fox jumps over the lazy dog\n"
    return (unit * (size // len(unit) + 1))[:size]


def build_conversation(total: int = MESSAGES) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": _text(6_000, 0)},
        {"role": "user", "content": _text(1_500, 1)},
    ]
    step = 0
    while len(messages) < total:
        call_id = f"call_{step}"
        arguments = json.dumps({"path": f"src/module_{step}.py"})
        messages.append(
            {
                "role": "assistant",
                "content": _text(300 + (step * 37) % 900, step) if step % 2 else None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "read_file", "arguments": arguments},
                    }
                ],
            }
        )
        size = BIG_RESULT_CHARS if step % 3 == 0 else 1_000 + (step * 7919) % 19_000
        messages.append({"role": "tool", "tool_call_id": call_id, "content": _text(size, step)})
        if step % 4 == 3:
            text_size = 12_000 if step % 8 == 7 else 300 + (step * 131) % 4_000
            messages.append({"role": "assistant", "content": _text(text_size, step)})
        step += 1
    return messages[:total]


def median_ms(action: Callable[[], object], runs: int) -> tuple[float, list[float]]:
    timings: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        timings.append((time.perf_counter() - start) * 1000)
    return statistics.median(timings), timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()

    config = MercuryConfig()
    messages = build_conversation()
    big = sum(1 for m in messages if m["role"] == "tool" and len(m["content"]) >= BIG_RESULT_CHARS)
    result = compact_messages(messages, config)
    machine = f"{platform.machine()} {platform.processor()}".strip()
    print(f"machine: {machine}, python {platform.python_version()}")
    print(
        f"conversation: {len(messages)} messages, {big} tool results of 200 KB, "
        f"{result.chars_before / 1e6:.1f} M chars"
    )
    print(
        f"compaction: {result.compacted} messages compacted, "
        f"{result.chars_before / 1e6:.1f} M -> {result.chars_after / 1e6:.1f} M chars"
    )

    med, timings = median_ms(lambda: compact_messages(messages, config), args.runs)
    print(
        f"compact_messages: median {med:.1f} ms over {args.runs} runs "
        f"(min {min(timings):.1f}, max {max(timings):.1f}); target <= 50 ms"
    )

    compacted = result.messages
    med_again, _ = median_ms(lambda: compact_messages(compacted, config), args.runs)
    print(f"compact_messages on already-compacted list: median {med_again:.1f} ms")
    med_est, _ = median_ms(lambda: estimate_tokens(messages), args.runs)
    print(f"estimate_tokens: median {med_est:.1f} ms")
    med_plan, _ = median_ms(lambda: plan_summary(compacted, config), args.runs)
    print(f"plan_summary: median {med_plan:.1f} ms")


if __name__ == "__main__":
    main()
