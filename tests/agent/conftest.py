"""Runs each loop test against the in-process scripted model and over real HTTP (litellm ->
loopback server, and the openai SDK -> loopback server), so the contract is pinned at every
level."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from mercury_nb.testing.script import ScriptStep
from mercury_nb.transport.protocol import ChatModel


@dataclass
class Backend:
    """One way of serving a script: ``model`` for run_task, ``requests`` as OpenAI bodies."""

    kind: str
    model: ChatModel
    _requests: Callable[[], list[dict[str, Any]]]

    @property
    def requests(self) -> list[dict[str, Any]]:
        return self._requests()

    def tool_names(self, index: int) -> list[str]:
        return [t["function"]["name"] for t in self.requests[index].get("tools") or []]


def _body_of(request: Any) -> dict[str, Any]:
    return {
        "messages": list(request.messages),
        "tools": list(request.tools),
        "tool_choice": request.tool_choice if request.tools else None,
        "max_tokens": request.max_tokens,
    }


@pytest.fixture(params=["scripted", "http", "http-openai"])
def backend(
    request: pytest.FixtureRequest, scripted_model: Any, loopback_server: Any
) -> Callable[[Sequence[ScriptStep]], Backend]:
    kind = request.param

    def make(turns: Sequence[ScriptStep]) -> Backend:
        if kind == "scripted":
            model = scripted_model(turns)
            return Backend(kind, model, lambda: [_body_of(r) for r in model.requests])
        from mercury_nb.transport.litellm_model import LiteLLMModel
        from mercury_nb.transport.openai_model import OpenAIModel

        server = loopback_server(turns)
        http_model: ChatModel
        if kind == "http-openai":  # the openai-SDK transport OpenAI-compatible models use
            http_model = OpenAIModel("openai/mercury-test", "mercury-test", server.url,
                                     "sk-test", 30)
        else:
            http_model = LiteLLMModel("openai/mercury-test", api_base=server.url,
                                      api_key="sk-test", timeout_s=30)
        return Backend(kind, http_model, lambda: list(server.requests))

    return make
