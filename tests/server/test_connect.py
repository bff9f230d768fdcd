"""The model picker's API: demos listed, a start refused for want of a key (no ledger row),
and "Connect a model" checked against the loopback server: the key reaches that endpoint
and nothing else (no API reply, no ledger file)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from test_handlers import Fetch, call, on_server_loop, wait_status

from mercury_nb.server.connections import Connections
from mercury_nb.testing import HttpError, LoopbackServer, Turn

SECRET = "sk-loopback-secret-4f1c9a"
REFUSAL = "Incorrect credentials: the loopback server does not accept them (code 7)"


@pytest.fixture
def jp_server_config() -> dict[str, Any]:
    return {"ServerApp": {"jpserver_extensions": {"mercury_nb.server": True}}}


@pytest.fixture(autouse=True)
def _no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "MERCURY_API_KEY", "MERCURY_MODEL", "MERCURY_API_BASE",
                 "MERCURY_FALLBACKS"):
        monkeypatch.delenv(name, raising=False)


def home() -> Path:
    return Path(os.environ["MERCURY_HOME"])


def auth(headers: dict[str, str]) -> str | None:
    return {name.lower(): value for name, value in headers.items()}.get("authorization")


def ledger_bytes() -> bytes:
    """Every file under MERCURY_HOME but the saved connections (the ledger, its WAL...)."""
    return b"".join(path.read_bytes() for path in sorted(home().rglob("*"))
                    if path.is_file() and path.name != "connections.json")


@on_server_loop
async def test_demos_are_listed_and_marked(jp_fetch: Fetch) -> None:
    reply = await call(jp_fetch, "models")
    choices = {choice["name"]: choice for choice in reply["choices"]}
    for name in ("scripted/quickstart", "scripted/walkthrough"):
        assert name in reply["models"]
        assert choices[name]["demo"] is True
        assert choices[name]["description"].startswith("demo, offline")
        assert choices[name]["missing_key"] is None
    assert choices["gpt-4o-mini"]["demo"] is False
    assert "OPENAI_API_KEY" in choices["gpt-4o-mini"]["missing_key"]
    assert "memory" in reply["storage"]["session"]
    assert str(home() / "connections.json") in reply["storage"]["file"]


@on_server_loop
async def test_a_demo_completes_offline(jp_fetch: Fetch) -> None:
    started = await call(jp_fetch, "tasks", method="POST", expect=201,
                         body={"task": "Write greet(name) with a test.",
                               "model": "scripted/quickstart"})
    detail = await wait_status(jp_fetch, started["task_id"], ("completed", "paused", "failed"),
                               timeout=180)
    assert detail["task"]["status"] == "completed", detail["task"]["banner"]


@on_server_loop
async def test_a_start_without_a_key_is_refused_and_leaves_no_row(jp_fetch: Fetch) -> None:
    reply = await call(jp_fetch, "tasks", method="POST", expect=409,
                       body={"task": "Write notes.", "model": "gpt-4o-mini"})
    assert reply["kind"] == "missing-key"
    assert reply["link"] == "connect"
    assert "no API key for the model gpt-4o-mini: set OPENAI_API_KEY" in reply["error"]
    assert (await call(jp_fetch, "tasks"))["tasks"] == []
    assert b"Write notes." not in ledger_bytes()


@on_server_loop
async def test_connect_checks_keeps_the_key_out_of_replies_and_the_ledger(
    jp_fetch: Fetch,
) -> None:
    script = [Turn(text="OK"), Turn(text="The notes say hello.")]
    with LoopbackServer(script, on_exhausted="repeat_last") as server:
        body = {"model": "loop-model", "api_base": server.url, "key": SECRET}
        response = await jp_fetch("mercury", "api", "models", "connect", method="POST",
                                  body=json.dumps(body))
        connected = json.loads(response.body)
        assert connected["model"] == "loop-model" and connected["has_key"] is True
        assert connected["reply"] == "OK"
        assert len(server.requests) == 1  # one cheap request
        assert server.requests[0]["max_tokens"] <= 16
        assert auth(server.posts[0][1]) == f"Bearer {SECRET}"
        listed = await jp_fetch("mercury", "api", "models")
        choice = next(c for c in json.loads(listed.body)["choices"] if c["name"] == "loop-model")
        assert choice["connected"] is True and choice["missing_key"] is None
        started = await call(jp_fetch, "tasks", method="POST", expect=201,
                             body={"task": "What do the notes say?", "model": "loop-model"})
        detail = await wait_status(jp_fetch, started["task_id"],
                                   ("completed", "paused", "failed"))
        assert len(server.requests) >= 2  # the task went to the connected endpoint...
        assert all(auth(headers) == f"Bearer {SECRET}"
                   for _, headers in server.posts)  # ...with its key
        replies = [response.body, listed.body, json.dumps(detail).encode(),
                   (await jp_fetch("mercury", "api", "tasks")).body]
    assert all(SECRET.encode() not in reply for reply in replies)
    assert b"What do the notes say?" in ledger_bytes()  # the ledger was written...
    assert SECRET.encode() not in ledger_bytes()  # ...without the key
    assert not (home() / "connections.json").exists()  # "session": memory only


@on_server_loop
async def test_a_refused_check_shows_the_providers_error_verbatim(jp_fetch: Fetch) -> None:
    with LoopbackServer([Turn(fault=HttpError(401, message=REFUSAL))]) as server:
        reply = await call(jp_fetch, "models", "connect", method="POST", expect=422,
                           body={"model": "loop-model", "api_base": server.url,
                                 "key": SECRET})
        assert len(server.requests) == 1
    assert reply["error"] == REFUSAL
    assert reply["http_status"] == 401
    assert SECRET not in json.dumps(reply)
    listed = await call(jp_fetch, "models")
    assert listed["connected"] == []  # nothing kept


@on_server_loop
async def test_a_saved_key_is_a_0600_file_read_again(jp_fetch: Fetch) -> None:
    with LoopbackServer([Turn(text="OK")]) as server:
        base = server.url
        reply = await call(jp_fetch, "models", "connect", method="POST",
                           body={"model": "loop-saved", "api_base": base,
                                 "key": SECRET, "storage": "file"})
    assert SECRET not in json.dumps(reply)
    assert "mode 0600" in reply["kept"]
    saved = home() / "connections.json"
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    again = Connections(home())
    assert again.load() == []
    found = again.get("loop-saved")
    assert found is not None and found.key == SECRET and found.api_base == base


def test_a_file_others_may_read_is_not_used(tmp_path: Path) -> None:
    saved = tmp_path / "connections.json"
    saved.write_text(json.dumps([{"model": "m", "api_base": None, "key": SECRET}]))
    saved.chmod(0o644)
    store = Connections(tmp_path)
    notices = store.load()
    assert notices and "readable by others" in notices[0]
    assert store.get("m") is None
