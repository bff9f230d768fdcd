"""Resolves a model name to a ChatModel: a registered in-process model or a litellm model."""

from __future__ import annotations

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.transport.litellm_model import LiteLLMModel
from mercury_nb.transport.model_registry import SCRIPTED_PREFIX, lookup_scripted
from mercury_nb.transport.protocol import ChatModel


def resolve_model(name: str, config: MercuryConfig) -> ChatModel:
    """``scripted/<n>`` is the model registered under that name (``LookupError`` if none);
    any other name goes through litellm with the config's endpoint, key and timeout."""
    if name.startswith(SCRIPTED_PREFIX):
        return lookup_scripted(name)
    return LiteLLMModel(name, config.api_base, config.api_key, config.request_timeout_s)
