"""No SQLite statement of the ledger runs on the server's event loop thread: every statement
a ledger connection executes (traced per connection) while the panel's API lists, starts,
watches, reads and stops tasks, while those tasks run, when an "Always allow" from the panel
saves its rule, and in the server's startup pass before it serves, names the thread it ran
on. The HTTP client's first import and TLS context are made off the loop too."""

from __future__ import annotations

import asyncio
import importlib
import json
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from panel_scripts import slow, verified
from test_handlers import jp_server_config, on_server_loop  # noqa: F401
from tornado.httpclient import HTTPResponse

from mercury_nb.ledger import files
from mercury_nb.testing import register_scripted_model, unregister_scripted_model

Fetch = Callable[..., Awaitable[HTTPResponse]]
Traced = list[tuple[int, str]]


@pytest.fixture
def traced(monkeypatch: pytest.MonkeyPatch) -> Iterator[Traced]:
    """(thread id, statement) of every statement run on a ledger connection opened from now."""
    seen: Traced = []
    real = sqlite3.connect

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = real(*args, **kwargs)
        conn.set_trace_callback(lambda sql: seen.append((threading.get_ident(), sql)))
        return conn

    monkeypatch.setattr(files.sqlite3, "connect", connect)
    runner = importlib.import_module("mercury_nb.runs.runner")  # runs.runner is the Runner
    monkeypatch.setattr(runner, "_client_loaded", [])
    real_load = runner.load_http_client
    monkeypatch.setattr(runner, "load_http_client", lambda: (
        seen.append((threading.get_ident(), "load_http_client")), real_load()))
    names = ["off-loop-done", "off-loop-slow", "off-loop-always"]
    register_scripted_model(names[0], verified())
    register_scripted_model(names[1], slow())
    register_scripted_model(names[2], verified())
    yield seen
    for name in names:
        unregister_scripted_model(name)


async def api(fetch: Fetch, *parts: str, body: Any = None) -> Any:
    method = "GET" if body is None else "POST"
    reply = await fetch("mercury", "api", *parts, method=method,
                        body=None if body is None else json.dumps(body))
    return json.loads(reply.body)


async def until(fetch: Fetch, task_id: str, done: Callable[[dict[str, Any]], bool]) -> None:
    deadline = time.monotonic() + 30
    while not done(await api(fetch, "tasks", task_id)):
        assert time.monotonic() < deadline, f"task {task_id} did not get there"
        await asyncio.sleep(0.05)


@on_server_loop
async def test_no_ledger_statement_runs_on_the_servers_loop_thread(
        traced: Traced, jp_fetch: Fetch, jp_ws_fetch: Any, jp_root_dir: Path) -> None:
    loop_thread = threading.get_ident()  # the test runs on the server's loop
    assert any("tasks" in sql for _, sql in traced)  # the server's startup pass was traced
    (jp_root_dir / "a").mkdir()
    (jp_root_dir / "b").mkdir()
    socket = await jp_ws_fetch("mercury", "api", "events")
    await api(jp_fetch, "tasks")
    done = (await api(jp_fetch, "tasks", body={"task": "Create a passing test.", "workdir": "a",
                                                "model": "scripted/off-loop-done"}))["task_id"]
    slow_id = (await api(jp_fetch, "tasks", body={"task": "Think slowly.", "workdir": "b",
                                                   "model": "scripted/off-loop-slow"}))["task_id"]
    await until(jp_fetch, done, lambda d: d["task"]["status"] == "completed")
    await until(jp_fetch, slow_id, lambda d: (jp_root_dir / "b" / "started.md").exists())
    listed = await api(jp_fetch, "tasks")
    assert {t["id"] for t in listed["tasks"]} == {done, slow_id}
    assert (await api(jp_fetch, "tasks", slow_id, "stop", body={}))["kind"] == "requested"
    await until(jp_fetch, slow_id, lambda d: d["task"]["status"] == "aborted")
    kinds = []
    while "task-finished" not in kinds:
        kinds.append(json.loads(await asyncio.wait_for(socket.read_message(), 10))["kind"])
    socket.close()
    writes = [sql for _, sql in traced if sql.lstrip().upper().startswith(("INSERT", "UPDATE"))]
    assert any("events" in sql for sql in writes)  # the trace saw the tasks' own writes
    assert any(sql.lstrip().upper().startswith("SELECT") for _, sql in traced)
    assert [sql for _, sql in traced].count("load_http_client") == 1  # the HTTP client's import too
    assert_off_loop(traced, loop_thread)


def assert_off_loop(traced: Traced, loop_thread: int) -> None:
    """No traced statement ran on ``loop_thread`` (the server's startup pass included)."""
    on_loop = [sql for thread, sql in traced if thread == loop_thread]
    assert on_loop == [], f"{len(on_loop)} of {len(traced)} on the loop, e.g. {on_loop[:5]}"


@on_server_loop
async def test_an_always_allow_from_the_panel_saves_its_rule_off_the_loop(
        traced: Traced, jp_fetch: Fetch, jp_root_dir: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MERCURY_PERMISSIONS", "edits")  # the check is asked about
    loop_thread = threading.get_ident()
    (jp_root_dir / "ws").mkdir()
    task_id = (await api(jp_fetch, "tasks", body={"task": "Create a passing test.",
                                                   "workdir": "ws",
                                                   "model": "scripted/off-loop-always"}
                         ))["task_id"]
    await until(jp_fetch, task_id, lambda d: bool((d["task"]["live"] or {}).get("approval")))
    detail = await api(jp_fetch, "tasks", task_id)
    number = detail["task"]["live"]["approval"]["request"]
    answered = await api(jp_fetch, "tasks", task_id, "approval",
                         body={"request": number, "answer": "always"})
    assert answered["answer"] == "always-allow"
    await until(jp_fetch, task_id, lambda d: d["task"]["status"] == "completed")
    saved = [thread for thread, sql in traced if "INSERT OR IGNORE INTO allow_rules" in sql]
    assert len(saved) == 1 and saved[0] != loop_thread  # the rule's write, traced off the loop
    assert_off_loop(traced, loop_thread)
