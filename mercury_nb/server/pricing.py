"""Estimated cost of a task's tokens from litellm's bundled price file, read without litellm.

The table is :func:`mercury_nb.transport.model_info.bundled_table`, the one the context
windows come from (located without importing litellm, parsed once). Local models (Ollama, LM Studio,
vLLM, llamafile, scripted) are "unknown", never a fake $0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mercury_nb.server.models import Cost
from mercury_nb.transport.model_info import bundled_table

LOCAL_PREFIXES = ("ollama/", "ollama_chat/", "lm_studio/", "hosted_vllm/", "llamafile/",
                  "scripted/", "local/")
_INPUT_KEYS = ("prompt_tokens", "input_tokens")
_OUTPUT_KEYS = ("completion_tokens", "output_tokens")


def _tokens(usage: Mapping[str, Any], keys: tuple[str, ...]) -> int:
    for key in keys:
        value = usage.get(key)
        if isinstance(value, int):
            return value
    return 0


def _entry(model: str) -> Mapping[str, Any] | None:
    prices = bundled_table()
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
