"""A model's price per token, from litellm's bundled table (read as JSON, litellm never imported).

The table is :func:`~mercury_nb.transport.model_info.bundled_table`, the one the context
windows come from. Local models (Ollama, LM Studio, vLLM, llamafile, scripted) and models the
table does not price are :class:`~mercury_nb.contract.spend.Unpriced`, never a fake $0; the
arithmetic is :mod:`mercury_nb.contract.spend`'s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from mercury_nb.contract.spend import Price, Unpriced
from mercury_nb.transport.model_info import bundled_table

LOCAL_PREFIXES = ("ollama/", "ollama_chat/", "lm_studio/", "hosted_vllm/", "llamafile/",
                  "scripted/", "local/")
LOCAL_MODEL = "local model"
NO_PRICE = "no price known"


def _entry(model: str, table: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for name in (model, model.split("/", 1)[-1]):
        entry = table.get(name)
        if isinstance(entry, dict) and "input_cost_per_token" in entry:
            return entry
    return None


def model_price(model: str, table: Mapping[str, Any] | None = None) -> Price | Unpriced:
    """``model``'s price in ``table`` (default: the bundled one; blocking ~0.1 s the first
    time it is parsed, then a lookup); a provider prefix is dropped when the table names the
    bare model."""
    if model.startswith(LOCAL_PREFIXES):
        return Unpriced(LOCAL_MODEL)
    entry = _entry(model, bundled_table() if table is None else table)
    if entry is None:
        return Unpriced(NO_PRICE)
    try:
        price = Price(float(entry.get("input_cost_per_token") or 0),
                      float(entry.get("output_cost_per_token") or 0))
    except (TypeError, ValueError):
        return Unpriced(NO_PRICE)
    if not all(math.isfinite(v) and v >= 0 for v in (price.input_per_token,
                                                      price.output_per_token)):
        return Unpriced(NO_PRICE)
    return price


def model_prices(models: list[str]) -> dict[str, Price | Unpriced]:
    """:func:`model_price` of each of ``models`` (blocking the first time: run it off the loop)."""
    return {model: model_price(model) for model in models}
