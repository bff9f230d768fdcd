"""Hostile inputs to the panel API: every malformed input of every endpoint is the documented
JSON 400 ``{"error": ...}`` (413 for an oversized body), never a 500 and never a socket that
opens to silence. (Here, not in tests/hostile/: it needs this folder's pytest-jupyter
fixtures.)"""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_handlers import Fetch, jp_server_config, on_server_loop  # noqa: F401
from tornado.httpclient import HTTPClientError

DEEP = 60_000


async def status_and_error(fetch: Fetch, *parts: str, method: str = "GET",
                           body: bytes | None = None, **kwargs: Any) -> tuple[int, Any]:
    try:
        response = await fetch("mercury", "api", *parts, method=method, body=body, **kwargs)
    except HTTPClientError as error:
        assert error.response is not None
        raw = error.response.body
        try:
            return error.code, json.loads(raw).get("error")
        except ValueError:
            return error.code, raw[:200]
    return response.code, None


def body(**fields: Any) -> bytes:
    return json.dumps(fields).encode()


BAD_BODIES = [
    pytest.param(body(task="x", workdir="a\x00b"), id="nul-in-workdir"),
    pytest.param(body(task="x", workdir="\ud800"), id="surrogate-in-workdir"),
    pytest.param(body(task="x", workdir="\udcff/x"), id="escaped-byte-in-workdir"),
    pytest.param(body(task="x", workdir="a" * 300), id="workdir-name-too-long"),
    pytest.param(body(task="x\x00y"), id="nul-in-task"),
    pytest.param(body(task="\udcff"), id="surrogate-in-task"),
    pytest.param(body(task="x", model="openai/\x00m"), id="nul-in-model"),
    pytest.param(body(task="x", fallbacks=["a", "\ud83d"]), id="surrogate-in-a-list"),
    pytest.param(b"[" * DEEP, id="array-nested-60000-deep"),
    pytest.param(b'{"task": "x", "fallbacks": ' + b"[" * DEEP, id="deep-inside-a-field"),
    pytest.param(b'{"a":' * 10_000 + b"1" + b"}" * 10_000, id="objects-nested-10000-deep"),
    pytest.param(b'{"task": "\xff\xfe"}', id="not-utf-8"),
    pytest.param(b'{"task": "x", "max_steps": ' + b"9" * 5000 + b"}", id="5000-digit-int"),
    pytest.param(body(task="x", max_steps=2**70), id="huge-int"),
    pytest.param(b'{"task": "x", "max_steps": 1e999}', id="infinite-float"),
    pytest.param(body(task="x", max_steps="many"), id="wrong-type"),
    pytest.param(body(task=["x"]), id="list-for-a-string"),
    pytest.param(b"null", id="null-body"),
    pytest.param(b'"just a string"', id="string-body"),
]


@pytest.mark.parametrize("raw", BAD_BODIES)
@on_server_loop
async def test_a_malformed_start_body_is_a_json_400(jp_fetch: Fetch, raw: bytes) -> None:
    code, error = await status_and_error(jp_fetch, "tasks", method="POST", body=raw)
    assert code == 400 and isinstance(error, str) and error, (code, error)


@pytest.mark.parametrize("raw", [
    pytest.param(b"[" * DEEP, id="nested-60000-deep"),
    pytest.param(body(model="m\x00"), id="nul-in-model"),
    pytest.param(body(model="\ud800"), id="surrogate-in-model"),
    pytest.param(body(max_steps=-(2**64)), id="huge-negative-int"),
    pytest.param(b"\xc3\x28", id="not-utf-8"),
])
@on_server_loop
async def test_a_malformed_continue_body_is_a_json_400(jp_fetch: Fetch, raw: bytes) -> None:
    code, error = await status_and_error(jp_fetch, "tasks", "abcdef123456", "continue",
                                         method="POST", body=raw)
    assert code == 400 and isinstance(error, str) and error, (code, error)


@pytest.mark.parametrize("params", [
    pytest.param({"offset": str(2**63)}, id="offset-past-2**63"),
    pytest.param({"offset": str(2**64 + 5)}, id="offset-past-2**64"),
    pytest.param({"offset": "9" * 5000}, id="offset-5000-digits"),
    pytest.param({"offset": "-1"}, id="negative-offset"),
    pytest.param({"limit": "-5"}, id="negative-limit"),
    pytest.param({"limit": str(2**80)}, id="huge-limit"),
    pytest.param({"limit": "1_0"}, id="underscore-int"),
    pytest.param({"workspace": "a\x00b"}, id="nul-in-workspace"),
    pytest.param({"workspace": "b" * 300}, id="workspace-name-too-long"),
    pytest.param({"workspace": b"\xed\xa0\x80"}, id="surrogate-bytes-in-workspace"),
    pytest.param({"status": b"\xff"}, id="status-not-utf-8"),
])
@on_server_loop
async def test_a_malformed_list_query_is_a_json_400(jp_fetch: Fetch,
                                                    params: dict[str, Any]) -> None:
    code, error = await status_and_error(jp_fetch, "tasks", params=params)
    assert code == 400 and isinstance(error, str) and error, (code, error)


@on_server_loop
async def test_the_largest_offset_is_an_empty_page(jp_fetch: Fetch) -> None:
    response = await jp_fetch("mercury", "api", "tasks", params={"offset": str(2**63 - 1)})
    page = json.loads(response.body)
    assert (page["tasks"], page["has_more"]) == ([], False)


@pytest.mark.parametrize("params", [
    pytest.param({"after": str(2**63)}, id="after-past-2**63"),
    pytest.param({"after": "-3"}, id="negative-after"),
    pytest.param({"after": "soon"}, id="after-not-a-number"),
    pytest.param({"task_id": "zz\x00"}, id="nul-in-task-id"),
])
@on_server_loop
async def test_a_malformed_events_query_is_a_json_400_before_the_upgrade(
    jp_ws_fetch: Any, params: dict[str, str]
) -> None:
    with pytest.raises(HTTPClientError) as refused:
        socket = await jp_ws_fetch("mercury", "api", "events", params=params)
        socket.close()
    assert refused.value.code == 400
    assert refused.value.response is not None
    assert json.loads(refused.value.response.body)["error"]
