"""Which environment variable holds a model's API key, and which models of a chain lack one.

Checked before any request, so a missing key costs no network round trip and no retries.
A key given to mercury itself (``MERCURY_API_KEY``, ``c.Mercury.api_key``) counts for every
model. A base URL on this machine or a private network needs no key (local servers such as
Ollama, llama.cpp, vLLM or LM Studio); OpenAI's and OpenRouter's own URLs need theirs; any
other remote endpoint may or may not want one, so none is demanded (its 401 names the
variable). Providers whose credentials are not one variable (Bedrock, Vertex AI, Ollama...)
or that only litellm can tell are not checked here.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from mercury_nb.contract.setup.routing import LiteLLMRoute, OpenAIRoute, Route, ScriptedRoute

MERCURY_KEY = "MERCURY_API_KEY"

KEY_VARIABLES: Mapping[str, tuple[str, ...]] = {
    # provider -> the variables litellm (or the openai SDK) reads, the one to name first
    "openai": ("OPENAI_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    "azure": ("AZURE_API_KEY", "AZURE_OPENAI_API_KEY", "AZURE_AD_TOKEN"),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "mistral": ("MISTRAL_API_KEY",),
    "codestral": ("CODESTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "cohere": ("COHERE_API_KEY", "CO_API_KEY"),
    "cohere_chat": ("COHERE_API_KEY", "CO_API_KEY"),
    "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY", "TOGETHER_AI_TOKEN"),
    "fireworks_ai": ("FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY", "FIREWORKSAI_API_KEY",
                     "FIREWORKS_AI_TOKEN"),
    "perplexity": ("PERPLEXITYAI_API_KEY", "PERPLEXITY_API_KEY"),
    "cerebras": ("CEREBRAS_API_KEY",),
    "deepinfra": ("DEEPINFRA_API_KEY",),
    "nvidia_nim": ("NVIDIA_NIM_API_KEY",),
    "replicate": ("REPLICATE_API_KEY", "REPLICATE_API_TOKEN"),
    "huggingface": ("HUGGINGFACE_API_KEY", "HF_TOKEN"),
    "moonshot": ("MOONSHOT_API_KEY",),
}  # fmt: skip

KEYED_HOSTS: Mapping[str, str] = {"api.openai.com": "openai", "openrouter.ai": "openrouter"}
"""Hosted endpoints reached through ``--api-base`` that always want their provider's key."""

MISSING_KEY = "no API key for the model {model}: set {variable} or " + MERCURY_KEY


@dataclass(frozen=True)
class MissingKey:
    """``model`` needs a key and none is set; ``variables`` are the ones it could come from,
    the usual one first."""

    model: str
    variables: tuple[str, ...]

    @property
    def text(self) -> str:
        return MISSING_KEY.format(model=self.model, variable=self.variables[0])


def is_local_url(url: str) -> bool:
    """Whether ``url`` points at this machine or a private network (no key expected)."""
    try:
        host = (urlsplit(url if "//" in url else f"//{url}").hostname or "").lower()
    except ValueError:
        return False
    if not host:
        return False
    if host == "localhost" or host.endswith((".localhost", ".local", ".internal", ".lan")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return "." not in host  # a single-label name: a container or a host on the LAN
    return address.is_loopback or address.is_private or address.is_link_local or (
        address.is_unspecified
    )


def key_variables(route: Route) -> tuple[str, ...]:
    """The variables a key for ``route`` comes from; ``()`` when none is demanded."""
    match route:
        case ScriptedRoute():
            return ()
        case OpenAIRoute(provider="endpoint", base_url=base):
            if base is None or is_local_url(base):
                return ()
            host = (urlsplit(base).hostname or "").lower()
            provider = next((p for h, p in KEYED_HOSTS.items() if host == h or
                             host.endswith("." + h)), None)
            return KEY_VARIABLES[provider] if provider is not None else ()
        case OpenAIRoute(provider=provider):
            return KEY_VARIABLES[provider]
        case LiteLLMRoute(provider=provider):
            return KEY_VARIABLES.get(provider or "", ())


def missing_keys(
    routes: Sequence[Route], *, configured_key: bool, environ: Mapping[str, str]
) -> tuple[MissingKey, ...]:
    """The models of a chain that need a key and have none (empty: nothing is missing).
    ``configured_key``: mercury was given a key (``MERCURY_API_KEY``...), which every model
    uses. An empty variable counts as unset."""
    if configured_key:
        return ()
    missing: list[MissingKey] = []
    for route in routes:
        variables = key_variables(route)
        if variables and not any(environ.get(name, "").strip() for name in variables):
            missing.append(MissingKey(route.name, variables))
    return tuple(missing)


def missing_keys_text(missing: Sequence[MissingKey]) -> str:
    """One sentence naming each model and the variable to set (``; ``-separated)."""
    return "; ".join(item.text for item in missing)
