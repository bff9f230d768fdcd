"""Windows too small for the tools, over real HTTP: a llama.cpp-like loopback server reports
its ``n_ctx`` in ``/props``; the agent fails honestly before sending anything, or runs the
task with the compact tool set (issue 16.4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mercury_nb.agent.events import AgentEvent, Notice
from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.failure_banners import about
from mercury_nb.contract.recovery.memory_governor import estimate_tokens, tools_tokens
from mercury_nb.testing import LoopbackServer, Turn, call
from mercury_nb.testing.script import HttpError
from mercury_nb.tools.registry import default_registry

TASK = "Create hello.py that prints hello world, and run it."
CALC_TASK = ("Add a function add(a, b) to calc.py and a pytest test in test_calc.py, then make "
             "the tests pass.")
FULL = tools_tokens(default_registry().schemas())
COMPACT = tools_tokens(default_registry().schemas(compact=True))
LLAMA_OVERFLOW = ("request (2110 tokens) exceeds the available context size (2048 tokens), "
                  "try increasing it")


def props(n_ctx: int) -> dict[str, Any]:
    return {"/props": {"default_generation_settings": {"n_ctx": n_ctx}}}


def config(tmp_path: Path, server: LoopbackServer, **kw: Any) -> MercuryConfig:
    kw.setdefault("tool_set", "auto")  # the tool set follows the window
    return MercuryConfig(permissions="auto",
                         workdir=tmp_path, model="openai/local", api_base=server.url,
                         api_key="sk-test", retry_base_s=0.0, request_timeout_s=30, **kw)


def notices(events: list[AgentEvent]) -> list[str]:
    return [e.text for e in events if isinstance(e, Notice)]


def descriptions(body: dict[str, Any]) -> dict[str, str]:
    return {t["function"]["name"]: t["function"]["description"] for t in body.get("tools") or ()}


COMPACT_DESCRIPTIONS = {s["function"]["name"]: s["function"]["description"]
                        for s in default_registry().schemas(compact=True)}


async def test_a_2048_window_that_cannot_hold_the_full_tools_fails_before_any_request(
    tmp_path: Path, loopback_server
) -> None:
    server = loopback_server([], routes=props(2048))
    outcome = await run_new_session(TASK, config(tmp_path, server, tool_set="full"))

    assert server.requests == []  # zero chat requests: none could fit
    assert "/props" in server.get_requests
    assert outcome.status == "failed", outcome.banner
    reason = (f"this model's 2,048-token window cannot hold the tool definitions "
              f"(about {about(FULL)} tokens)")
    assert 1600 <= FULL <= 2000  # measured: ~1,700 with finish, ~1,870 with run_cells
    lines = outcome.banner.split("\n")
    assert lines[0] == f"I couldn't finish this one — {reason}."
    assert outcome.blocker == reason
    assert "- use a model or server with a larger window (for llama-server: `-c 8192`);" in lines
    assert f"- or use the compact tool set: MERCURY_TOOL_SET=compact (about {COMPACT:,} tokens)." \
        in lines
    assert lines[-1] == ("Set MERCURY_CONTEXT_WINDOW only if the server really has more than "
                         "2,048 tokens.")
    assert "conversation" not in lines[0] and 'Send "continue"' not in outcome.banner
    assert outcome.steps == 0 and outcome.changes == []


async def test_a_window_too_small_even_for_the_compact_tools_fails_naming_it(
    tmp_path: Path, loopback_server
) -> None:
    server = loopback_server([], routes=props(1024))
    outcome = await run_new_session(TASK, config(tmp_path, server))

    assert server.requests == []
    assert outcome.status == "failed", outcome.banner
    assert outcome.banner.split("\n")[0] == (
        "I couldn't finish this one — this model's 1,024-token window cannot hold the tool "
        f"definitions (about {about(COMPACT)} tokens), even in their compact form.")
    assert "MERCURY_TOOL_SET=compact" not in outcome.banner  # it would not help


async def test_a_2048_window_runs_the_task_with_the_compact_tool_set(
    tmp_path: Path, loopback_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    # what the window holds must not hang on the suite's own environment: its pytest plugins
    # (pytest-asyncio's deprecation warning alone is ~700 chars) or CI's output settings
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("CI", raising=False)
    server = loopback_server([
        Turn(tool_calls=(call("create_file", path="calc.py",
                              content="def add(a, b):\n    return a + b\n"),)),
        Turn(tool_calls=(call("create_file", path="test_calc.py", content=(
            "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")),)),
        # a loud command: its output alone is larger than what the window leaves free
        Turn(tool_calls=(call("run_command", command="python -c \"print('log line ' * 700)\""),)),
        Turn(tool_calls=(call("run_command", command="python -m pytest -q test_calc.py"),)),
        Turn(text="add() is in calc.py and its test passes."),
    ], routes=props(2048))
    events: list[AgentEvent] = []
    outcome = await run_new_session(CALC_TASK, config(tmp_path, server), on_event=events.append)

    assert outcome.status == "completed", outcome.banner
    assert [c.path for c in outcome.changes] == ["calc.py", "test_calc.py"]
    assert len(server.requests) == 5
    for body in server.requests:
        assert descriptions(body) == COMPACT_DESCRIPTIONS  # the same 12 names, compact
        assert body["max_tokens"] == 512
        assert estimate_tokens(body["messages"]) + tools_tokens(body["tools"]) <= 2048 - 512
    assert notices(events).count(
        f"Using the compact tool set (short descriptions, about {COMPACT:,} tokens instead of "
        f"{FULL:,}): the full one leaves too little of this model's 2,048-token window for "
        "the conversation.") == 1


async def test_a_window_learned_from_an_overflow_moves_to_the_compact_set(
    tmp_path: Path, loopback_server
) -> None:
    # told 8192 (MERCURY_CONTEXT_WINDOW), the server really has 2048 and says so in a 400
    overflow = HttpError(400, message=LLAMA_OVERFLOW,
                         extra=(("type", "exceed_context_size_error"), ("n_ctx", 2048)))
    server = loopback_server([Turn(fault=overflow), Turn(text="There is nothing here yet.")])
    events: list[AgentEvent] = []
    outcome = await run_new_session("What is in this folder?",
                                    config(tmp_path, server, context_window=8192, mode="chat"),
                                    on_event=events.append)

    assert outcome.status == "completed", outcome.banner
    first, second = server.requests
    assert first["max_tokens"] == 2048 and len(first["tools"]) == len(default_registry().schemas())
    assert descriptions(first) != COMPACT_DESCRIPTIONS
    assert descriptions(second) == COMPACT_DESCRIPTIONS and second["max_tokens"] == 512
    assert any(n.startswith("Using the compact tool set") for n in notices(events))
