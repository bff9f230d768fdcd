"""The panel's POSTs reach a run through Runner.submit (patch the door and they knock)."""

from __future__ import annotations

import asyncio
import importlib
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from test_handlers import jp_server_config, on_server_loop  # noqa: F401
from tornado.httpclient import HTTPClientError, HTTPResponse

from mercury_nb.runs import Refusal, RunRequest
from mercury_nb.runs.runner import Runner

Fetch = Callable[..., Awaitable[HTTPResponse]]


@on_server_loop
async def test_start_and_continue_posts_knock_at_the_door(
        jp_fetch: Fetch, jp_root_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[RunRequest] = []

    def spy(self: Runner, request: RunRequest, *,
            loop: asyncio.AbstractEventLoop | None = None, resolved: object = None,
            permissions: object = None, live_edits: object = None) -> Refusal:
        seen.append(request)
        return Refusal("spied", kind="workspace-busy")

    monkeypatch.setattr(Runner, "submit", spy)
    (jp_root_dir / "proj").mkdir()
    for parts, body in ((("tasks",), {"task": "Write a.txt.", "workdir": "proj"}),
                        (("tasks", "abcdef123456", "continue"), {})):
        with pytest.raises(HTTPClientError) as refused:
            await jp_fetch("mercury", "api", *parts, method="POST", body=json.dumps(body))
        assert refused.value.code == 409
    assert [(r.task, r.resume, r.task_id) for r in seen] == [
        ("Write a.txt.", False, None), ("", True, "abcdef123456")]


@pytest.mark.parametrize(("workdir", "error"), [
    pytest.param("missing", "workdir 'missing' is not a folder", id="missing"),
    pytest.param("../..", "workdir '../..' is outside the server root", id="escape"),
    pytest.param("a" * 300, f"workdir {'a' * 300!r} is not a folder", id="name-too-long"),
])
@on_server_loop
async def test_a_start_posts_workdir_is_checked_once_by_the_door(
        jp_fetch: Fetch, monkeypatch: pytest.MonkeyPatch, workdir: str, error: str) -> None:
    from mercury_nb.server import handlers

    door = importlib.import_module("mercury_nb.runs.resolve")  # runs.resolve is the function
    checks: list[Path] = []
    real = door.workdir_refusal

    def counted(path: Path, within: Path | None) -> Refusal | None:
        checks.append(path)
        return real(path, within)

    def never(*args: Any) -> None:
        raise AssertionError("the server checked the workdir itself")

    monkeypatch.setattr(door, "workdir_refusal", counted)
    monkeypatch.setattr(handlers, "resolve_workdir", never)
    with pytest.raises(HTTPClientError) as refused:
        await jp_fetch("mercury", "api", "tasks", method="POST",
                       body=json.dumps({"task": "Write a.txt.", "workdir": workdir}))
    assert refused.value.code == 400
    assert refused.value.response is not None
    assert json.loads(refused.value.response.body)["error"] == error
    assert len(checks) == 1


@pytest.mark.parametrize("post", [
    pytest.param("stop", id="stop"),
    pytest.param("start", id="start"),
])
@on_server_loop
async def test_a_post_whose_ledger_access_blocks_leaves_the_server_loop_free(
        jp_fetch: Fetch, jp_root_dir: Path, monkeypatch: pytest.MonkeyPatch,
        post: str) -> None:
    import threading

    from mercury_nb.server import handlers

    runner = importlib.import_module("mercury_nb.runs.runner")  # runs.runner is the Runner

    entered, release = threading.Event(), threading.Event()
    answered_while_blocked: list[bool] = []
    waited_out: list[bool] = []

    def slow(real: Callable[..., Any]) -> Callable[..., Any]:
        def blocking(*args: Any, **kwargs: Any) -> Any:  # a ledger stuck on a lock
            entered.set()
            if not release.wait(30):  # a safety net: the test releases it unless the loop is
                waited_out.append(True)  # blocked, so nothing could release it
            return real(*args, **kwargs)
        return blocking

    if post == "stop":
        monkeypatch.setattr(handlers.runs, "request_stop", slow(handlers.runs.request_stop))
        parts, body = ("tasks", "abcdef123456", "stop"), ""
    else:
        monkeypatch.setattr(runner, "resolve", slow(runner.resolve))  # the door's planning
        (jp_root_dir / "proj").mkdir()
        parts, body = ("tasks",), json.dumps({"task": "Write a.txt.", "workdir": "proj"})
    blocked = asyncio.ensure_future(
        jp_fetch("mercury", "api", *parts, method="POST", body=body, raise_error=False))
    assert await asyncio.to_thread(entered.wait, 30)  # the POST is inside the ledger call
    other = await jp_fetch("mercury", "api", "tasks", method="GET")  # the loop still serves
    answered_while_blocked.append(other.code == 200 and not release.is_set())
    release.set()
    reply = await blocked
    assert answered_while_blocked == [True]
    assert waited_out == []
    assert reply.code in (404, 409), reply.body  # the blocked POST still got its answer
