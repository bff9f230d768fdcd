"""Estimated cost of a task's tokens from litellm's bundled price file, read without litellm.

The file is located with ``importlib.util.find_spec`` (which finds a package without
importing it) and parsed once, on the first estimate. Local models (Ollama, LM Studio,
vLLM, llamafile, scripted) are "unknown", never a fake $0.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mercury_nb.server.models import Cost

PRICE_FILE = "model_prices_and_context_window_backup.json"
LOCAL_PREFIXES = ("ollama/", "ollama_chat/", "lm_studio/", "hosted_vllm/", "llamafile/",
                  "scripted/", "local/")
_INPUT_KEYS = ("prompt_tokens", "input_tokens")
_OUTPUT_KEYS = ("completion_tokens", "output_tokens")


def price_file() -> Path | None:
    """Where the installed litellm keeps its bundled prices (None without litellm)."""
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / PRICE_FILE
        if candidate.is_file():
            return candidate
    return None


@functools.cache
def _prices() -> Mapping[str, Any]:
    path = price_file()
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _tokens(usage: Mapping[str, Any], keys: tuple[str, ...]) -> int:
    for key in keys:
        value = usage.get(key)
        if isinstance(value, int):
            return value
    return 0


def _entry(model: str) -> Mapping[str, Any] | None:
    prices = _prices()
    for name in (model, model.split("/", 1)[-1]):
        entry = prices.get(name)
        if isinstance(entry, dict) and "input_cost_per_token" in entry:
            return entry
    return None


def estimate(model: str, usage: Mapping[str, Any]) -> Cost:
    """The estimated USD cost of ``usage`` (prompt/completion token counts) on ``model``."""
    if model.startswith(LOCAL_PREFIXES):
        return Cost(model=model, usd=None, reason="local model")
    entry = _entry(model)
    if entry is None:
        return Cost(model=model, usd=None, reason="no price known")
    try:
        usd = (_tokens(usage, _INPUT_KEYS) * float(entry.get("input_cost_per_token") or 0)
               + _tokens(usage, _OUTPUT_KEYS) * float(entry.get("output_cost_per_token") or 0))
    except (TypeError, ValueError):
        return Cost(model=model, usd=None, reason="no price known")
    return Cost(model=model, usd=round(usd, 6))


def estimate_all(usage: Mapping[str, Mapping[str, Any]]) -> list[Cost]:
    """One estimate per model of a ``{model: {prompt_tokens, completion_tokens}}`` map."""
    return [estimate(model, counts) for model, counts in usage.items()
            if isinstance(counts, Mapping)]
