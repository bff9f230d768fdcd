"""The context window a model is budgeted for: an overflow error's, litellm's, the config's or
the server's.

litellm is asked only for a litellm model (off the event loop, once per name, local data
only); an openai-SDK model reads litellm's bundled table without importing litellm; an
OpenAI-compatible server behind ``api_base`` is asked where it says (llama.cpp ``/props``,
vLLM ``/v1/models``), else ``config.default_context_window`` is assumed. The same probe
says whether such a server's chat template takes tools (:func:`reported_tool_support`).
"""

from __future__ import annotations

import asyncio
from typing import Any

from mercury_nb.contract.config import MercuryConfig
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
    """The context window to budget for, first found of: the window a provider's overflow
    error named (``learned``), litellm's for a litellm model it knows (asked once per name,
    off the event loop; for an openai-SDK model, read from litellm's bundled table without
    importing litellm), ``config.context_window``, what the server behind the model's
    ``api_base`` reports (llama.cpp ``/props``, vLLM ``/v1/models``), and for such a model
    ``config.default_context_window``. None: unknown (no context budget)."""
    if learned and model.name in learned:
        return learned[model.name]
    from mercury_nb.transport.litellm_model import LiteLLMModel
    from mercury_nb.transport.openai_model import OpenAIModel

    if isinstance(model, OpenAIModel) and model.catalog_names:
        from mercury_nb.transport.model_info import bundled_context_window

        if model.name not in _windows:
            found = await asyncio.to_thread(bundled_context_window, *model.catalog_names)
            _windows[model.name] = found
        known = _windows[model.name]
        if known is not None:
            return known
    elif isinstance(model, LiteLLMModel):
        if model.name not in _windows:
            try:
                from mercury_nb.transport.litellm_loader import load_litellm

                litellm = await load_litellm()
                found = await asyncio.to_thread(litellm_context_window, litellm, model.name)
            except Exception:
                found = None
            _windows[model.name] = found
        known = _windows[model.name]
        if known is not None:
            return known
    if config.context_window is not None:
        return config.context_window
    # an OpenAI-compatible server, whichever transport talks to it (litellm or the SDK)
    server = _server_of(model)
    if server is not None:
        from mercury_nb.transport.context_probe import probe_window

        probed = await probe_window(*server)
        return probed if probed is not None else config.default_context_window
    return None


def _server_of(model: ChatModel) -> tuple[str, str] | None:
    """``(api_base, wire model name)`` of a model served behind an ``api_base``, else None."""
    api_base = getattr(model, "api_base", None) or getattr(model, "base_url", None)
    if not isinstance(api_base, str) or not api_base:
        return None
    wire_name = getattr(model, "model", None)
    return api_base, wire_name if isinstance(wire_name, str) else model.name


async def reported_tool_support(model: ChatModel) -> bool | None:
    """Whether the OpenAI-compatible ``--api-base`` server behind ``model`` says its chat
    template takes tools (llama.cpp ``/props`` ``chat_template_caps``): asked once per base
    and model, whatever the context window's source, within the probe's timeout. None: not
    such a server (a catalogued provider, an in-process model), or it did not say."""
    from mercury_nb.transport.openai_model import OpenAIModel

    if isinstance(model, OpenAIModel) and model.catalog_names:
        return None  # a known provider's own endpoint, not a self-hosted server
    server = _server_of(model)
    if server is None:
        return None
    from mercury_nb.transport.context_probe import probe_server

    return (await probe_server(*server)).takes_tools
