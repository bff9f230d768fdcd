"""Resolves a model name to a ChatModel: scripted, the openai SDK, or litellm (routing.py)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.setup.keys import key_variables
from mercury_nb.contract.setup.routing import (
    LiteLLMRoute,
    OpenAIRoute,
    ScriptedRoute,
    route_model,
)
from mercury_nb.transport.protocol import ChatModel


def resolve_model(name: str, config: MercuryConfig) -> ChatModel:
    """``scripted/<n>`` is the model registered under that name (``LookupError`` if none);
    OpenAI-compatible names and endpoints go to the openai SDK, every other provider through
    litellm (imported only then), with the config's endpoint, key and timeout."""
    route = route_model(name, config.api_base)
    match route:
        case ScriptedRoute():
            from mercury_nb.testing.scripted_model import get_scripted_model

            return get_scripted_model(name)
        case OpenAIRoute():
            return openai_model(route, config)
        case LiteLLMRoute():
            from mercury_nb.transport.litellm_model import LiteLLMModel

            return LiteLLMModel(name, config.api_base, config.api_key, config.request_timeout_s)


def openai_model(
    route: OpenAIRoute, config: MercuryConfig, environ: Mapping[str, str] | None = None
) -> ChatModel:
    """The openai-SDK model for ``route``. Its key: mercury's own, else the first of the
    provider's variables that is set, else ``OPENAI_API_KEY`` (the SDK's convention for
    custom endpoints), else none (local servers)."""
    from mercury_nb.transport.openai_model import OpenAIModel

    env = os.environ if environ is None else environ
    key: str | None = config.api_key.get_secret_value() if config.api_key else None
    fallback = ("OPENAI_API_KEY",) if route.provider == "endpoint" else ()
    for variable in (*key_variables(route), *fallback):
        if key:
            break
        key = env.get(variable) or None
    field = "max_completion_tokens" if route.provider == "openai" else "max_tokens"
    catalog: tuple[str, ...] = ()
    if route.provider != "endpoint":
        catalog = (f"{route.provider}/{route.model}", route.model)
    return OpenAIModel(route.name, route.model, route.base_url, key, config.request_timeout_s,
                       max_tokens_field=field, catalog_names=catalog)
