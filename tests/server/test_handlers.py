"""The panel's REST + WebSocket API in a real jupyter_server (pytest-jupyter), scripted models."""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from jupyter_core.utils import ensure_event_loop
from panel_scripts import XSS, delegating, hostile, pausing, slow, verified
from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPResponse

from mercury_nb.server.backend import runs
from mercury_nb.testing import register_scripted_model, unregister_scripted_model


def on_server_loop(test: Callable[..., Awaitable[None]]) -> Callable[..., None]:
    """Run an async test on pytest-jupyter's loop, where the server lives (pytest-asyncio's
    auto mode would otherwise run it on a loop of its own, and every request would hang)."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        ensure_event_loop(prefer_selector_loop=True).run_until_complete(test(*args, **kwargs))

    return run

Fetch = Callable[..., Awaitable[HTTPResponse]]


@pytest.fixture
def jp_server_config() -> dict[str, Any]:
    return {"ServerApp": {"jpserver_extensions": {"mercury_nb.server": True}}}


@pytest.fixture
def models() -> Any:
    names: list[str] = []

    def register(name: str, turns: Any) -> str:
        register_scripted_model(name, turns)
        names.append(name)
        return f"scripted/{name}"

    yield register
    for name in names:
        unregister_scripted_model(name)


async def call(fetch: Fetch, *parts: str, method: str = "GET", body: Any = None,
               expect: int = 200, **kwargs: Any) -> Any:
    raw = body if isinstance(body, (bytes, str)) or body is None else json.dumps(body)
    try:
        response = await fetch("mercury", "api", *parts, method=method, body=raw, **kwargs)
    except HTTPClientError as error:
        assert error.code == expect, (error.code, error.response and error.response.body)
        assert error.response is not None
        return json.loads(error.response.body)
    assert response.code == expect, response.body
    return json.loads(response.body)


async def wait_status(fetch: Fetch, task_id: str, statuses: tuple[str, ...],
                      timeout: float = 30.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        detail = await call(fetch, "tasks", task_id)
        if detail["task"]["status"] in statuses:
            return detail
        assert time.monotonic() < deadline, f"still {detail['task']['status']}"
        await asyncio.sleep(0.1)


async def start(fetch: Fetch, model: str, text: str, workdir: str = "",
                **extra: Any) -> str:
    reply = await call(fetch, "tasks", method="POST", expect=201,
                       body={"task": text, "model": model, "workdir": workdir, **extra})
    return str(reply["task_id"])


# --- start / list / detail, and the WebSocket --------------------------------------------


@on_server_loop
async def test_started_task_completes_and_its_events_arrive_in_order(
    jp_fetch: Fetch, jp_ws_fetch: Any, jp_root_dir: Path, models: Any
) -> None:
    (jp_root_dir / "proj").mkdir()
    socket = await jp_ws_fetch("mercury", "api", "events")
    model = models("api-complete", verified())
    task_id = await start(jp_fetch, model, "Create a passing test.", "proj")
    detail = await wait_status(jp_fetch, task_id, ("completed", "paused", "failed"))
    assert detail["task"]["status"] == "completed", detail
    assert detail["task"]["banner"].startswith("✓ Task complete")
    assert detail["task"]["workspace"] == str((jp_root_dir / "proj").resolve())
    [change] = detail["changes"]
    assert change["path"] == "test_ok.py" and change["kind"] == "created"
    assert "+def test_ok():" in change["diff"]
    assert detail["evidence"][0]["exit_code"] == 0
    kinds: list[str] = []
    ids: list[int] = []
    while "task-finished" not in kinds:
        message = json.loads(await asyncio.wait_for(socket.read_message(), 5))
        assert message["task_id"] == task_id
        kinds.append(message["kind"])
        ids.append(message["id"])
        live = message["live"]  # the server's fold: the panel shows it as it comes
        if message["kind"] == "tool-started":
            assert (live["step"], live["tool"]) == (message["data"]["step"],
                                                   message["data"]["name"])
        elif message["kind"] in ("step-started", "tool-finished"):
            assert live["tool"] is None
        assert live["at"] <= message["at"]
    socket.close()
    assert kinds[0] == "task-started" and "tool-started" in kinds
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    listed = await call(jp_fetch, "tasks", params={"workspace": "proj"})
    assert [t["id"] for t in listed["tasks"]] == [task_id]
    assert (await call(jp_fetch, "tasks", params={"status": "paused"}))["tasks"] == []


@on_server_loop
async def test_list_is_paged(jp_fetch: Fetch, models: Any) -> None:
    ids = []
    for n in range(3):  # one after the other: a busy workspace refuses a second task
        model = models(f"api-page-{n}", [verified()[-1]])
        ids.append(await start(jp_fetch, model, f"Say hello {n}."))
        await wait_status(jp_fetch, ids[-1], ("completed", "paused", "failed"))
    first = await call(jp_fetch, "tasks", params={"limit": "2"})
    second = await call(jp_fetch, "tasks", params={"limit": "2", "offset": "2"})
    assert first["has_more"] and not second["has_more"]
    assert {t["id"] for t in first["tasks"] + second["tasks"]} == set(ids)


SMALL_PAGES = {"ServerApp": {"jpserver_extensions": {"mercury_nb.server": True}},
               "MercuryServerApp": {"page_size": 2}}


@pytest.mark.parametrize("jp_server_config", [SMALL_PAGES])
@on_server_loop
async def test_a_list_without_limit_pages_by_the_servers_page_size(
    jp_fetch: Fetch, models: Any
) -> None:
    for n in range(3):
        model = models(f"api-size-{n}", [verified()[-1]])
        await wait_status(jp_fetch, await start(jp_fetch, model, f"Say hi {n}."),
                          ("completed", "paused", "failed"))
    first = await call(jp_fetch, "tasks")
    assert first["limit"] == 2 and len(first["tasks"]) == 2 and first["has_more"]
    everything = await call(jp_fetch, "tasks", params={"limit": "3"})
    assert everything["limit"] == 3 and len(everything["tasks"]) == 3


@on_server_loop
async def test_a_list_without_limit_pages_by_fifty(jp_fetch: Fetch) -> None:
    assert (await call(jp_fetch, "tasks"))["limit"] == 50


@on_server_loop
async def test_stop_ends_a_running_task_aborted(
    jp_fetch: Fetch, models: Any
) -> None:
    task_id = await start(jp_fetch, models("api-slow", slow()), "Think slowly.")
    deadline = time.monotonic() + 10
    while not Path(json.loads((await jp_fetch("mercury", "api", "tasks", task_id)).body)
                   ["task"]["workspace"], "started.md").exists():
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)
    reply = await call(jp_fetch, "tasks", task_id, "stop", method="POST", body="")
    assert reply["kind"] == "requested"
    detail = await wait_status(jp_fetch, task_id, ("aborted", "completed", "failed"))
    assert (detail["task"]["status"], detail["task"]["verdict"]) == ("aborted", "aborted")
    assert [c["path"] for c in detail["changes"]] == ["started.md"]  # stopped, files kept
    again = await call(jp_fetch, "tasks", task_id, "stop", method="POST", body="")
    assert again["kind"] == "not-running"


@on_server_loop
async def test_continue_resumes_a_paused_task(
    jp_fetch: Fetch, models: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MERCURY_MAX_AUTO_CONTINUATIONS", "0")
    model = models("api-pause", pausing())
    task_id = await start(jp_fetch, model, "Write notes.", max_steps=1)
    paused = await wait_status(jp_fetch, task_id, ("paused", "completed", "failed"))
    assert paused["task"]["status"] == "paused", paused
    refused = await call(jp_fetch, "tasks", task_id, "continue", method="POST",
                         body={"max_steps": 1001}, expect=400)  # the config's range
    assert refused["error"] == "max_steps must be a whole number from 1 to 1000"
    await call(jp_fetch, "tasks", task_id, "continue", method="POST",
               body={"max_steps": 5})
    done = await wait_status(jp_fetch, task_id, ("completed", "failed", "aborted"))
    assert done["task"]["status"] == "completed", done
    refused = await call(jp_fetch, "tasks", task_id, "continue", method="POST", body="",
                         expect=409)
    assert "completed" in refused["error"]


# --- refusals ----------------------------------------------------------------------------


@on_server_loop
async def test_continue_obeys_the_server_root_like_start(
    jp_fetch: Fetch, jp_root_dir: Path, tmp_path_factory: pytest.TempPathFactory, home: Path
) -> None:
    """A paused task whose workspace lies outside the root (started by the CLI elsewhere)
    cannot be continued from the panel: it would write there."""
    from mercury_nb.ledger.records import TaskHeader
    from mercury_nb.ledger.store import Ledger

    outside = tmp_path_factory.mktemp("outside-the-root")
    header = TaskHeader(id="0a0b0c0d0e0f", task="Write notes.", workspace=str(outside),
                        models=("scripted/none",))
    ledger = Ledger(home / "ledger.sqlite3")
    try:
        ledger.start_task(header)
        ledger.finish_task(header, status="paused", verdict="steps-exhausted", banner="paused",
                           blocker=None, changes="[]", evidence="[]", steps=1)
    finally:
        ledger.close()
    refused = await call(jp_fetch, "tasks", header.id, "continue", method="POST", body="",
                         expect=403)
    assert refused["kind"] == "outside-root"
    assert "outside the server root" in refused["error"]
    detail = await call(jp_fetch, "tasks", header.id)
    assert detail["task"]["status"] == "paused"
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        pytest.param("{not json", "not valid JSON", id="bad-json"),
        pytest.param({"task": ""}, "task", id="empty-task"),
        pytest.param({"task": "x", "surprise": 1}, "surprise", id="unknown-field"),
        pytest.param({"task": "x", "max_steps": 0}, "max_steps", id="bad-steps"),
        pytest.param({"task": "x", "max_steps": 1001},
                     "max_steps must be a whole number from 1 to 1000", id="steps-over-1000"),
        pytest.param({"task": "x", "workdir": "../.."}, "outside the server root",
                     id="workdir-escape"),
        pytest.param({"task": "x", "workdir": "/etc"}, "outside the server root",
                     id="workdir-absolute"),
        pytest.param({"task": "x", "workdir": "missing"}, "not a folder", id="workdir-missing"),
    ],
)
@on_server_loop
async def test_bad_start_requests_get_400_with_a_json_error(
    jp_fetch: Fetch, body: Any, fragment: str
) -> None:
    reply = await call(jp_fetch, "tasks", method="POST", body=body, expect=400)
    assert fragment in reply["error"]


@on_server_loop
async def test_workdir_symlink_out_of_the_root_is_refused(
    jp_fetch: Fetch, jp_root_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    (jp_root_dir / "link").symlink_to(tmp_path_factory.mktemp("outside"))
    reply = await call(jp_fetch, "tasks", method="POST", expect=400,
                       body={"task": "x", "workdir": "link"})
    assert "outside the server root" in reply["error"]


@on_server_loop
async def test_oversized_body_gets_413(jp_fetch: Fetch) -> None:
    body = json.dumps({"task": "x" * 70_000})
    reply = await call(jp_fetch, "tasks", method="POST", body=body, expect=413)
    assert "bytes" in reply["error"]


@pytest.mark.parametrize(
    ("parts", "method"),
    [
        pytest.param(("tasks", "abcdef123456"), "GET", id="detail"),
        pytest.param(("tasks", "abcdef123456", "stop"), "POST", id="stop"),
        pytest.param(("tasks", "abcdef123456", "continue"), "POST", id="continue"),
    ],
)
@on_server_loop
async def test_unknown_task_gets_404(jp_fetch: Fetch, parts: tuple[str, ...],
                                     method: str) -> None:
    reply = await call(jp_fetch, *parts, method=method,
                       body=None if method == "GET" else "", expect=404)
    assert "abcdef123456" in reply["error"]


@pytest.mark.parametrize(
    "params",
    [
        pytest.param({"status": "exploded"}, id="status"),
        pytest.param({"limit": "0"}, id="limit"),
        pytest.param({"offset": "x"}, id="offset"),
        pytest.param({"workspace": "../"}, id="workspace-escape"),
    ],
)
@on_server_loop
async def test_bad_list_queries_get_400(jp_fetch: Fetch, params: dict[str, str]) -> None:
    await call(jp_fetch, "tasks", params=params, expect=400)


# --- authentication, XSRF ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("parts", "method"),
    [
        pytest.param(("tasks",), "GET", id="list"),
        pytest.param(("tasks",), "POST", id="start"),
        pytest.param(("models",), "GET", id="models"),
        pytest.param(("tasks", "abcdef", "stop"), "POST", id="stop"),
    ],
)
@on_server_loop
async def test_requests_without_a_token_get_403(jp_fetch: Fetch, parts: tuple[str, ...],
                                               method: str) -> None:
    await call(jp_fetch, *parts, method=method, body=None if method == "GET" else "{}",
               headers={"Authorization": ""}, expect=403)


@on_server_loop
async def test_websocket_without_a_token_is_refused(jp_ws_fetch: Any) -> None:
    with pytest.raises(HTTPClientError) as refused:
        await jp_ws_fetch("mercury", "api", "events", headers={"Authorization": ""})
    assert refused.value.code == 403


async def browser_cookies(serverapp: Any, client: Any, base_url: str,
                          host: str = "127.0.0.1") -> dict[str, str]:
    """What a browser holds after opening Lab with ``?token=``: the login cookie (no token on
    later requests; its name carries the host) and the ``_xsrf`` cookie."""
    jar: dict[str, str] = {}
    origin = f"http://{host}:{serverapp.port}"
    for url in (f"{base_url}login?token={serverapp.identity_provider.token}",
                f"{base_url}login"):
        reply = await AsyncHTTPClient().fetch(origin + url, follow_redirects=False,
                                              raise_error=False)
        for value in reply.headers.get_list("Set-Cookie"):
            name, _, rest = value.split(";")[0].partition("=")
            jar[name] = rest
    assert any(name.startswith("username-") for name in jar), jar
    assert "_xsrf" in jar, jar
    return jar


def cookie_header(jar: dict[str, str]) -> dict[str, str]:
    return {"Authorization": "", "Cookie": "; ".join(f"{k}={v}" for k, v in jar.items())}


@on_server_loop
async def test_websocket_checks_the_origin(
    jp_ws_fetch: Any, jp_serverapp: Any, http_server_client: Any, jp_base_url: str,
    jp_http_port: int,
) -> None:
    headers = cookie_header(await browser_cookies(jp_serverapp, http_server_client,
                                                  jp_base_url, "localhost"))
    with pytest.raises(HTTPClientError) as refused:
        await jp_ws_fetch("mercury", "api", "events",
                          headers={**headers, "Origin": "http://evil.test"})
    assert refused.value.code == 403
    same = await jp_ws_fetch("mercury", "api", "events",
                             headers={**headers, "Origin": f"http://localhost:{jp_http_port}"})
    same.close()


@on_server_loop
async def test_cookie_post_without_xsrf_gets_403(
    jp_fetch: Fetch, jp_serverapp: Any, http_server_client: Any, jp_base_url: str,
    models: Any,
) -> None:
    jar = await browser_cookies(jp_serverapp, http_server_client, jp_base_url)
    headers = cookie_header(jar)
    listed = await call(jp_fetch, "tasks", headers=headers)  # a cookie is enough for GET
    assert listed["tasks"] == []
    refused = await jp_fetch("mercury", "api", "tasks", method="POST", raise_error=False,
                             body=json.dumps({"task": "x"}), headers=headers)
    assert refused.code == 403
    model = models("api-xsrf", [verified()[-1]])
    allowed = await call(jp_fetch, "tasks", method="POST", expect=201,
                         body={"task": "Say hello.", "model": model},
                         headers={**headers, "X-XSRFToken": jar["_xsrf"]})
    await wait_status(jp_fetch, allowed["task_id"], ("completed", "paused", "failed"))


# --- output is data, never markup --------------------------------------------------------


@on_server_loop
async def test_markup_in_texts_comes_back_as_plain_json_strings(
    jp_fetch: Fetch, models: Any
) -> None:
    task_id = await start(jp_fetch, models("api-xss", hostile()), f"Write a note about {XSS}")
    detail = await wait_status(jp_fetch, task_id, ("completed", "paused", "failed"))
    assert detail["task"]["task"] == f"Write a note about {XSS}"
    assert any(XSS in c["diff"] for c in detail["changes"])
    listed = await jp_fetch("mercury", "api", "tasks")
    assert listed.headers["Content-Type"].startswith("application/json")


@on_server_loop
async def test_models_lists_registered_scripts(jp_fetch: Fetch, models: Any) -> None:
    name = models("api-listed", [verified()[-1]])
    reply = await call(jp_fetch, "models")
    assert name in reply["models"]
    assert reply["max_steps"] == runs.plan({}).max_steps  # the prompt box's default
    unregister_scripted_model("api-listed")


@on_server_loop
async def test_detail_of_a_finished_task_has_its_answer(jp_fetch: Fetch, models: Any) -> None:
    task_id = await start(jp_fetch, models("api-answer", [verified()[-1]]), "Say it.")
    detail = await wait_status(jp_fetch, task_id, ("completed", "paused", "failed"))
    assert detail["answer"] == "Created test_ok.py and it passes."


@on_server_loop
async def test_a_sub_agent_is_listed_with_its_parent_and_shown_in_the_parents_detail(
    jp_fetch: Fetch, models: Any
) -> None:
    task_id = await start(jp_fetch, models("api-delegate", delegating()),
                          "What does a helper find in this folder?")
    detail = await wait_status(jp_fetch, task_id, ("completed", "paused", "failed"))
    assert detail["task"]["status"] == "completed", detail
    sub_id = f"{task_id}.1"
    [sub] = detail["subagents"]
    assert (sub["id"], sub["parent"], sub["status"]) == (sub_id, task_id, "completed")
    assert sub["task"] == "Which files are in this folder?"
    assert detail["task"]["parent"] is None
    sub_detail = await call(jp_fetch, "tasks", sub_id)
    assert sub_detail["task"]["parent"] == task_id
    assert sub_detail["answer"] == "There are no files in this folder."
    listed = {t["id"]: t["parent"] for t in (await call(jp_fetch, "tasks"))["tasks"]}
    assert listed == {task_id: None, sub_id: task_id}
