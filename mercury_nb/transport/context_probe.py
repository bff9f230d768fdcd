"""Asks an OpenAI-compatible server for its context window (transport-neutral, stdlib only).

llama.cpp answers ``GET /props`` with ``n_ctx`` (under ``default_generation_settings`` in
recent versions); vLLM lists ``max_model_len`` per model in ``GET /v1/models``. Any model
object with an ``api_base`` (the litellm transport, an OpenAI-SDK transport) can be probed.
Each base URL and model is asked once per process; a server that does not say gives None.
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from typing import Any

PROBE_TIMEOUT_S = 3.0
_cache: dict[tuple[str, str], int | None] = {}


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


def probe_window_sync(api_base: str, model: str, api_key: str | None = None) -> int | None:
    """The window the server at ``api_base`` reports for ``model``, or None."""
    base = api_base.rstrip("/")
    root = base[: -len("/v1")] if base.endswith("/v1") else base
    v1 = base if base.endswith("/v1") else f"{base}/v1"
    for url, read in ((f"{root}/props", window_from_props),
                      (f"{v1}/models", lambda d: window_from_models(d, model))):
        try:
            found = read(_get_json(url, api_key))
        except (OSError, ValueError, urllib.error.URLError):
            continue
        if found is not None:
            return found
    return None


async def probe_window(api_base: str, model: str, api_key: str | None = None) -> int | None:
    """:func:`probe_window_sync` off the event loop, asked once per (base, model)."""
    key = (api_base, model)
    if key not in _cache:
        _cache[key] = await asyncio.to_thread(probe_window_sync, api_base, model, api_key)
    return _cache[key]
