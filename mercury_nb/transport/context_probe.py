"""Asks an OpenAI-compatible server what it reports of itself: its context window and
whether its chat template takes tools (transport-neutral, stdlib only).

llama.cpp answers ``GET /props`` with ``n_ctx`` (under ``default_generation_settings`` in
recent versions) and ``chat_template_caps`` (``supports_tools``, ``supports_tool_calls``);
vLLM lists ``max_model_len`` per model in ``GET /v1/models``. Any model object with an
``api_base`` (the litellm transport, the OpenAI-compatible one) can be probed. A server is
asked once per model object, that is once per task (each URL within
:data:`PROBE_TIMEOUT_S`), not once per process: a server restarted with another template
(``--jinja``) on the same URL is asked again by the next task. A server that does not say
gives None.
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
import weakref
from dataclasses import dataclass
from typing import Any

PROBE_TIMEOUT_S = 3.0


@dataclass(frozen=True)
class ServerFacts:
    """What a server reported: ``window`` in tokens, ``takes_tools`` from its chat template's
    caps (None: it did not say)."""

    window: int | None = None
    takes_tools: bool | None = None


_cache: weakref.WeakKeyDictionary[Any, ServerFacts] = weakref.WeakKeyDictionary()
"""What the server of each model object (its ``owner``) said, kept while the object lives."""


def _get_json(url: str, api_key: str | None) -> Any:
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    with urllib.request.urlopen(request, timeout=PROBE_TIMEOUT_S) as response:
        return json.loads(response.read(1 << 20))


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def window_from_props(data: Any) -> int | None:
    """llama.cpp's ``/props``: ``n_ctx`` at the top or in ``default_generation_settings``."""
    if not isinstance(data, dict):
        return None
    settings = data.get("default_generation_settings")
    nested = settings.get("n_ctx") if isinstance(settings, dict) else None
    return _positive(nested) or _positive(data.get("n_ctx"))


def tools_from_props(data: Any) -> bool | None:
    """llama.cpp's ``/props`` ``chat_template_caps``: False when ``supports_tools`` or
    ``supports_tool_calls`` is false (the server then drops the tools), True when one is
    true and neither false, None when neither is said."""
    caps = data.get("chat_template_caps") if isinstance(data, dict) else None
    if not isinstance(caps, dict):
        return None
    said = [caps[key] for key in ("supports_tools", "supports_tool_calls")
            if isinstance(caps.get(key), bool)]
    if not said:
        return None
    return all(said)


def window_from_models(data: Any, model: str) -> int | None:
    """vLLM's ``/v1/models``: the named model's ``max_model_len`` (else the only model's)."""
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None
    short = model.split("/", 1)[-1]
    with_len = [e for e in entries if isinstance(e, dict) and _positive(e.get("max_model_len"))]
    for entry in with_len:
        if entry.get("id") in (model, short):
            return _positive(entry.get("max_model_len"))
    return _positive(with_len[0].get("max_model_len")) if len(with_len) == 1 else None


def _roots(api_base: str) -> tuple[str, str]:
    base = api_base.rstrip("/")
    root = base[: -len("/v1")] if base.endswith("/v1") else base
    v1 = base if base.endswith("/v1") else f"{base}/v1"
    return root, v1


def probe_server_sync(api_base: str, model: str, api_key: str | None = None) -> ServerFacts:
    """What the server at ``api_base`` reports for ``model``: ``/props`` first (window and
    tool caps), then ``/v1/models`` for a window ``/props`` did not give."""
    root, v1 = _roots(api_base)
    window: int | None = None
    takes_tools: bool | None = None
    try:
        props = _get_json(f"{root}/props", api_key)
    except (OSError, ValueError, urllib.error.URLError):
        props = None
    if props is not None:
        window = window_from_props(props)
        takes_tools = tools_from_props(props)
    if window is None:
        try:
            window = window_from_models(_get_json(f"{v1}/models", api_key), model)
        except (OSError, ValueError, urllib.error.URLError):
            window = None
    return ServerFacts(window=window, takes_tools=takes_tools)


def probe_window_sync(api_base: str, model: str, api_key: str | None = None) -> int | None:
    """The window the server at ``api_base`` reports for ``model``, or None."""
    return probe_server_sync(api_base, model, api_key).window


async def probe_server(api_base: str, model: str, api_key: str | None = None, *,
                       owner: Any = None) -> ServerFacts:
    """:func:`probe_server_sync` off the event loop; asked once per ``owner`` (the model
    object whose server it is; None: asked every time)."""
    found = None if owner is None else _cache.get(owner)
    if found is None:
        found = await asyncio.to_thread(probe_server_sync, api_base, model, api_key)
        if owner is not None:
            _cache[owner] = found
    return found


async def probe_window(api_base: str, model: str, api_key: str | None = None, *,
                       owner: Any = None) -> int | None:
    """The window of :func:`probe_server` (one probe answers both questions)."""
    return (await probe_server(api_base, model, api_key, owner=owner)).window
