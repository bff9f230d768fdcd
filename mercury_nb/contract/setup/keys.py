"""Which API key goes to which host, and which models of a chain lack one.

A provider's key leaves only for that provider's own hosts (:data:`PROVIDER_HOSTS`): an
``--api-base`` elsewhere (a local server, another provider, any other host) never gets
``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY`` or any provider variable, whatever the model's
prefix; it gets the key given to mercury itself (``MERCURY_API_KEY``, ``c.Mercury.api_key``),
which the user sets for the endpoint they name, or the provider key of the host it is (an
``--api-base`` at ``openrouter.ai`` gets ``OPENROUTER_API_KEY``), or none.

Checked before any request, so a missing key costs no network round trip and no retries. A
base URL on this machine or a private network needs no key (local servers such as Ollama,
llama.cpp, vLLM or LM Studio); a provider's own URL needs its key; any other remote endpoint
may or may not want one, so none is demanded (its 401 names the variable). Providers whose
credentials are not one variable (Bedrock, Vertex AI, Ollama...) or that only litellm can
tell are not checked here.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from mercury_nb.contract.setup.routing import LiteLLMRoute, OpenAIRoute, Route, ScriptedRoute

MERCURY_KEY = "MERCURY_API_KEY"

KEY_VARIABLES: Mapping[str, tuple[str, ...]] = {
    # provider -> the variables litellm (or the OpenAI route) reads, the one to name first
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

PROVIDER_HOSTS: Mapping[str, tuple[str, ...]] = {
    # provider -> the domains its key may be sent to (the domain or any host under it)
    "openai": ("openai.com",),
    "openrouter": ("openrouter.ai",),
    "anthropic": ("anthropic.com",),
    "azure": ("azure.com", "azure-api.net"),
    "gemini": ("generativelanguage.googleapis.com",),
    "mistral": ("mistral.ai",),
    "codestral": ("mistral.ai",),
    "groq": ("groq.com",),
    "deepseek": ("deepseek.com",),
    "xai": ("x.ai",),
    "cohere": ("cohere.ai", "cohere.com"),
    "cohere_chat": ("cohere.ai", "cohere.com"),
    "together_ai": ("together.xyz", "together.ai"),
    "fireworks_ai": ("fireworks.ai",),
    "perplexity": ("perplexity.ai",),
    "cerebras": ("cerebras.ai",),
    "deepinfra": ("deepinfra.com",),
    "nvidia_nim": ("nvidia.com",),
    "replicate": ("replicate.com",),
    "huggingface": ("huggingface.co", "huggingface.cloud", "hf.space"),
    "moonshot": ("moonshot.cn", "moonshot.ai"),
}  # fmt: skip
"""Where each provider of :data:`KEY_VARIABLES` is served: its key goes nowhere else."""

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
    host = host_of(url)
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


def host_of(url: str) -> str:
    """The lower-case host of ``url`` ("" when it has none or cannot be read)."""
    try:
        return (urlsplit(url if "//" in url else f"//{url}").hostname or "").lower()
    except ValueError:
        return ""


def provider_at(url: str) -> str | None:
    """The provider whose own host ``url`` points at (its key may go there), or None."""
    host = host_of(url)
    if not host:
        return None
    return next((provider for provider, domains in PROVIDER_HOSTS.items()
                 if any(host == domain or host.endswith("." + domain) for domain in domains)),
                None)


def _at_base(base: str) -> tuple[str, ...]:
    """The variables whose key may go to an ``--api-base``: those of the provider the host
    is, none for any other host (a local server, an unknown endpoint)."""
    if is_local_url(base):
        return ()
    provider = provider_at(base)
    return KEY_VARIABLES.get(provider, ()) if provider is not None else ()


def key_variables(route: Route) -> tuple[str, ...]:
    """The variables a key for ``route`` comes from (the only ones whose key may go where it
    points); ``()`` when none is demanded."""
    match route:
        case ScriptedRoute():
            return ()
        case OpenAIRoute(provider="endpoint", base_url=base):
            return () if base is None else _at_base(base)
        case OpenAIRoute(provider=provider):
            return KEY_VARIABLES[provider]
        case LiteLLMRoute(provider=provider, base_url=base):
            return KEY_VARIABLES.get(provider or "", ()) if base is None else _at_base(base)


def provider_reads_own_key(route: Route) -> bool:
    """Whether litellm may read ``route``'s provider variables itself: it calls the
    provider's own URL (no ``api_base``, or one at the provider's own host). Else it must be
    handed the key (or a placeholder), or it would send the provider's key to the base.
    Never for the OpenAI-compatible transport: it is always handed its key."""
    match route:
        case LiteLLMRoute(provider=provider, base_url=base):
            # a provider whose credentials are not one variable (Bedrock, Vertex AI...) keeps
            # litellm's own credential chain
            return base is None or provider not in KEY_VARIABLES or provider_at(base) == provider
        case _:
            return False


def key_for(route: Route, configured: str | None, environ: Mapping[str, str]) -> str | None:
    """The key sent for ``route``: mercury's own (``configured``), else the first set
    variable of :func:`key_variables` (the host's own provider), else None."""
    if configured:
        return configured
    return next((environ[name].strip() for name in key_variables(route)
                 if environ.get(name, "").strip()), None)


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
