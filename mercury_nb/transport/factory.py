"""Resolves a model name to a ChatModel: a registered in-process model (``scripted/``), the
OpenAI-compatible HTTP transport, or litellm (routing.py)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.setup.keys import (
    key_for,
    missing_keys,
    missing_keys_text,
    provider_reads_own_key,
)
from mercury_nb.contract.setup.routing import (
    LiteLLMRoute,
    OpenAIRoute,
    ScriptedRoute,
    route_model,
)
from mercury_nb.contract.turns.stream_bounds import ReplyLimits
from mercury_nb.transport.model_registry import lookup_scripted
from mercury_nb.transport.protocol import ChatModel

SETUP_FAILED = "the model could not be set up: {error}"
"""The reason of the Failed ending when a model of the chain cannot be resolved."""


class MissingApiKey(ValueError):
    """A model of the chain needs an API key and none is set (found before any request)."""


def missing_key_error(
    config: MercuryConfig,
    environ: Mapping[str, str] | None = None,
    chain: tuple[str, ...] | None = None,
) -> str | None:
    """The text naming every model of the chain (``config.model_chain`` unless given) that
    lacks its key (None: all set)."""
    env = os.environ if environ is None else environ
    names = config.model_chain if chain is None else chain
    routes = [route_model(name, config.api_base) for name in names]
    missing = missing_keys(routes, configured_key=config.api_key is not None, environ=env)
    return missing_keys_text(missing) if missing else None


def resolve_model(name: str, config: MercuryConfig) -> ChatModel:
    """``scripted/<n>`` is the model registered under that name (``LookupError`` if none);
    OpenAI-compatible names and endpoints go over plain HTTP, every other provider through
    litellm (imported only then), with the config's endpoint, key and timeout. When a model
    of the chain needs a key no variable holds, :class:`MissingApiKey` names every such
    model (no request is made)."""
    route = route_model(name, config.api_base)
    chain = config.model_chain if name in config.model_chain else (name,)
    problem = missing_key_error(config, chain=chain)
    if problem is not None:  # the whole chain is named, as the CLI names it
        raise MissingApiKey(problem)
    match route:
        case ScriptedRoute():  # registered by mercury_nb.testing (never imported from here)
            return lookup_scripted(name)
        case OpenAIRoute():
            return openai_model(route, config)
        case LiteLLMRoute():
            from mercury_nb.transport.litellm_model import LiteLLMModel

            return LiteLLMModel(name, config.api_base, litellm_key(route, config),
                                config.request_timeout_s, ReplyLimits.of(config))


def _configured(config: MercuryConfig) -> str | None:
    return config.api_key.get_secret_value() if config.api_key else None


def litellm_key(route: LiteLLMRoute, config: MercuryConfig,
                environ: Mapping[str, str] | None = None) -> str | None:
    """The key handed to litellm: mercury's own, else none where litellm calls the
    provider's own URL (it reads the provider's variables itself), else the key of the
    ``api_base``'s own provider, or a placeholder: litellm would otherwise send the
    provider's key from the environment to that base."""
    if provider_reads_own_key(route):
        return _configured(config)
    from mercury_nb.transport.openai_model import NO_KEY_NEEDED

    env = os.environ if environ is None else environ
    return key_for(route, _configured(config), env) or NO_KEY_NEEDED


def openai_model(
    route: OpenAIRoute, config: MercuryConfig, environ: Mapping[str, str] | None = None
) -> ChatModel:
    """The openai-SDK model for ``route``. Its key: mercury's own, else the variable of the
    provider whose own host it calls (``OPENAI_API_KEY`` for OpenAI, ``OPENROUTER_API_KEY``
    for OpenRouter, the host's provider for an ``--api-base``), else none: a local server or
    another endpoint never gets a provider's key."""
    from mercury_nb.transport.openai_model import OpenAIModel

    env = os.environ if environ is None else environ
    key = key_for(route, _configured(config), env)
    field = "max_completion_tokens" if route.provider == "openai" else "max_tokens"
    catalog: tuple[str, ...] = ()
    if route.provider != "endpoint":
        catalog = (f"{route.provider}/{route.model}", route.model)
    return OpenAIModel(route.name, route.model, route.base_url, key, config.request_timeout_s,
                       max_tokens_field=field, catalog_names=catalog,
                       limits=ReplyLimits.of(config))
