"""Gathers the facts of a model's context window; which one wins is decided in the core.

The precedence is :func:`mercury_nb.contract.recovery.window_precedence.choose_window`'s.
litellm is asked only for a litellm model (off the event loop, once per name, local data
only); an openai-SDK model reads litellm's bundled table without importing litellm; an
OpenAI-compatible server behind ``api_base`` is asked where it says (llama.cpp ``/props``,
vLLM ``/v1/models``). The same probe says whether such a server's chat template takes
tools (:func:`reported_tool_support`).
"""

from __future__ import annotations

import asyncio
from typing import Any, assert_never

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.recovery.window_precedence import (
    AskSource,
    NoWindow,
    UseWindow,
    WindowFacts,
    choose_window,
)
from mercury_nb.transport.protocol import ChatModel

SERVER_QUERIED_PROVIDERS = frozenset({"ollama", "ollama_chat", "huggingface"})
"""Providers whose model info litellm fetches from a server: never asked (no network)."""

_windows: dict[str, int | None] = {}


def litellm_context_window(litellm: Any, name: str) -> int | None:
    """Input tokens litellm's bundled model info gives for ``name``, or None when it does not
    know the model. Providers whose info lives on a server are not asked."""
    if name.split("/", 1)[0] in SERVER_QUERIED_PROVIDERS:
        return None
    try:
        info = litellm.get_model_info(name)
    except Exception:
        return None
    for key in ("max_input_tokens", "max_tokens"):
        value = info.get(key) if hasattr(info, "get") else None
        if isinstance(value, int) and value > 0:
            return value
    return None


async def context_window_of(
    model: ChatModel, config: MercuryConfig, learned: dict[str, int] | None = None
) -> int | None:
    """The context window to budget for, as :func:`choose_window` decides (learned > catalog
    > config > server > default), gathering only the facts it asks for: the window a
    provider's overflow error named (``learned``), the catalog's for a litellm model
    (litellm's model info, asked once per name, off the event loop) or an openai-SDK model
    with catalog names (litellm's bundled table, read without importing litellm), and what
    the server behind the model's ``api_base`` reports (llama.cpp ``/props``, vLLM
    ``/v1/models``). None: unknown (no context budget)."""
    facts = WindowFacts(
        learned=(learned or {}).get(model.name),
        has_catalog=_has_catalog(model),
        has_server=_api_base(model) is not None,
    )
    while True:
        match choose_window(facts, config):
            case UseWindow(tokens=tokens):
                return tokens
            case NoWindow():
                return None
            case AskSource(source=source):
                found = await (_catalog_window if source == "catalog" else _server_window)(model)
                facts = facts.answered(source, found)
            case other:
                assert_never(other)


def _has_catalog(model: ChatModel) -> bool:
    from mercury_nb.transport.litellm_model import LiteLLMModel
    from mercury_nb.transport.openai_model import OpenAIModel

    return isinstance(model, LiteLLMModel) or (
        isinstance(model, OpenAIModel) and bool(model.catalog_names)
    )


def _api_base(model: ChatModel) -> str | None:
    """The OpenAI-compatible server behind the model, whichever transport talks to it."""
    api_base = getattr(model, "api_base", None) or getattr(model, "base_url", None)
    return api_base if isinstance(api_base, str) and api_base else None


async def _catalog_window(model: ChatModel) -> int | None:
    """The catalog's window for the model, looked up once per name."""
    if model.name not in _windows:
        _windows[model.name] = await _look_up(model)
    return _windows[model.name]


async def _look_up(model: ChatModel) -> int | None:
    from mercury_nb.transport.openai_model import OpenAIModel

    if isinstance(model, OpenAIModel):
        from mercury_nb.transport.model_info import bundled_context_window

        return await asyncio.to_thread(bundled_context_window, *model.catalog_names)
    try:
        from mercury_nb.transport.litellm_loader import load_litellm

        litellm = await load_litellm()
        return await asyncio.to_thread(litellm_context_window, litellm, model.name)
    except Exception:
        return None


def _server_of(model: ChatModel) -> tuple[str, str] | None:
    """``(api_base, wire model name)`` of a model served behind an ``api_base``, else None."""
    api_base = _api_base(model)
    if api_base is None:
        return None
    wire_name = getattr(model, "model", None)
    return api_base, wire_name if isinstance(wire_name, str) else model.name


async def _server_window(model: ChatModel) -> int | None:
    from mercury_nb.transport.context_probe import probe_window

    server = _server_of(model)
    return None if server is None else await probe_window(*server, owner=model)


async def reported_tool_support(model: ChatModel) -> bool | None:
    """Whether the OpenAI-compatible ``--api-base`` server behind ``model`` says its chat
    template takes tools (llama.cpp ``/props`` ``chat_template_caps``): asked once per model
    object (a task's), whatever the context window's source, within the probe's timeout. None: not
    such a server (a catalogued provider, an in-process model), or it did not say."""
    from mercury_nb.transport.openai_model import OpenAIModel

    if isinstance(model, OpenAIModel) and model.catalog_names:
        return None  # a known provider's own endpoint, not a self-hosted server
    server = _server_of(model)
    if server is None:
        return None
    from mercury_nb.transport.context_probe import probe_server

    return (await probe_server(*server, owner=model)).takes_tools
