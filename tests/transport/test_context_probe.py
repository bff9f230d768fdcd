"""The server probe: llama.cpp's /props window and chat-template caps, asked once per server."""

from __future__ import annotations

from typing import Any

import pytest

from mercury_nb.testing import LoopbackServer, llama_cpp_props
from mercury_nb.transport.context_probe import (
    ServerFacts,
    probe_server,
    probe_server_sync,
    tools_from_props,
    window_from_props,
)
from mercury_nb.transport.context_window import reported_tool_support
from mercury_nb.transport.openai_model import OpenAIModel


@pytest.mark.parametrize(
    ("props", "expected"),
    [
        pytest.param({"chat_template_caps": {"supports_tools": False,
                                             "supports_tool_calls": False}}, False, id="none"),
        pytest.param({"chat_template_caps": {"supports_tools": False}}, False, id="tools-false"),
        pytest.param({"chat_template_caps": {"supports_tools": True,
                                             "supports_tool_calls": False}}, False,
                     id="calls-false"),
        pytest.param({"chat_template_caps": {"supports_tools": True,
                                             "supports_tool_calls": True}}, True, id="both"),
        pytest.param({"chat_template_caps": {"supports_tool_calls": True}}, True, id="calls-only"),
        pytest.param({"chat_template_caps": {"supports_tools": "no"}}, None, id="not-a-bool"),
        pytest.param({"chat_template_caps": {}}, None, id="empty-caps"),
        pytest.param({"n_ctx": 4096}, None, id="older-server"),
        pytest.param([], None, id="not-an-object"),
    ],
)
def test_tools_from_props(props: Any, expected: bool | None) -> None:
    assert tools_from_props(props) is expected


def test_one_props_request_gives_window_and_caps() -> None:
    routes = llama_cpp_props(2048, supports_tools=False)
    with LoopbackServer([], routes=routes) as server:
        assert probe_server_sync(server.url, "smollm2") == ServerFacts(2048, False)
        assert server.get_requests == ["/props"]
    assert window_from_props(routes["/props"]) == 2048


def test_a_silent_server_says_nothing() -> None:
    with LoopbackServer([]) as server:
        assert probe_server_sync(server.url, "smollm2") == ServerFacts(None, None)
        assert server.get_requests == ["/props", "/v1/models"]


async def test_tool_support_is_asked_once_of_an_api_base_server_only() -> None:
    with LoopbackServer([], routes=llama_cpp_props(4096, supports_tools=False)) as server:
        endpoint = OpenAIModel("smollm2", "smollm2", server.url, None, 5.0)
        assert await reported_tool_support(endpoint) is False
        assert await reported_tool_support(endpoint) is False  # once per model object
        assert server.get_requests == ["/props"]
        assert (await probe_server(server.url, "smollm2")).window == 4096  # no owner: asked
        assert server.get_requests == ["/props", "/props"]
        catalogued = OpenAIModel("openai/gpt-4o", "gpt-4o", server.url, None, 5.0,
                                 catalog_names=("openai/gpt-4o",))
        assert await reported_tool_support(catalogued) is None
        assert server.get_requests == ["/props", "/props"]


async def test_the_next_task_asks_a_restarted_server_again() -> None:
    """A server restarted on the same URL with a template that takes tools (the ``--jinja``
    the no-tools banner asks for) is not judged by what it said before the restart."""
    with LoopbackServer([], routes=llama_cpp_props(4096, supports_tools=False)) as server:
        first = OpenAIModel("smollm2", "smollm2", server.url, None, 5.0)
        assert await reported_tool_support(first) is False
        server.routes.update(llama_cpp_props(4096, supports_tools=True))
        assert await reported_tool_support(first) is False  # the same task: asked once
        second = OpenAIModel("smollm2", "smollm2", server.url, None, 5.0)  # the next task's
        assert await reported_tool_support(second) is True
