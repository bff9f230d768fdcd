"""Estimated cost of a task's tokens for the panel, from the one price source the agent uses.

Prices are :func:`mercury_nb.transport.prices.model_price`'s (litellm's bundled table, read
without litellm), the arithmetic :func:`mercury_nb.contract.spend.cost_usd`, so the panel's
"Tokens and cost" and a task's ``cost_usd`` agree. Local models (Ollama, LM Studio, vLLM,
llamafile, scripted) are "unknown", never a fake $0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mercury_nb.contract.spend import Unpriced, cost_usd
from mercury_nb.server.models import Cost
from mercury_nb.transport.model_info import bundled_table
from mercury_nb.transport.prices import LOCAL_PREFIXES, model_price

__all__ = ["LOCAL_PREFIXES", "estimate", "estimate_all"]

_INPUT_KEYS = ("prompt_tokens", "input_tokens")
_OUTPUT_KEYS = ("completion_tokens", "output_tokens")


def _tokens(usage: Mapping[str, Any], keys: tuple[str, ...]) -> int:
    for key in keys:
        value = usage.get(key)
        if isinstance(value, int):
            return value
    return 0


def estimate(model: str, usage: Mapping[str, Any]) -> Cost:
    """The estimated USD cost of ``usage`` (prompt/completion token counts) on ``model``."""
    price = model_price(model, None if model.startswith(LOCAL_PREFIXES) else bundled_table())
    if isinstance(price, Unpriced):
        return Cost(model=model, usd=None, reason=price.reason)
    return Cost(model=model, usd=cost_usd(_tokens(usage, _INPUT_KEYS),
                                          _tokens(usage, _OUTPUT_KEYS), price))


def estimate_all(usage: Mapping[str, Mapping[str, Any]]) -> list[Cost]:
    """One estimate per model of a ``{model: {prompt_tokens, completion_tokens}}`` map."""
    return [estimate(model, counts) for model, counts in usage.items()
            if isinstance(counts, Mapping)]
