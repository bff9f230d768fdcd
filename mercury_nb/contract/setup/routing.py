"""Which transport serves a model name (OpenAI-compatible HTTP, litellm, scripted), and where.

The rules, in order (``api_base`` is ``--api-base`` / ``MERCURY_API_BASE``):

1. ``scripted/<n>`` is a scripted model.
2. ``openai/``, ``custom_openai/``, ``openai_like/``, ``hosted_vllm/``, ``lm_studio/`` and
   ``openrouter/`` speak OpenAI's protocol: the OpenAI-compatible transport serves them (prefix
   stripped) at ``api_base`` (OpenAI itself, or OpenRouter's URL, when there is none;
   ``hosted_vllm/`` and ``lm_studio/`` without a base stay with litellm, which reads their
   ``*_API_BASE`` variables).
3. Any other litellm provider prefix (``anthropic/``, ``gemini/``, ``azure/``,
   ``bedrock/``, ``ollama/``...) goes through litellm, which passes ``api_base`` on.
4. With an ``api_base``, every other name (``llama3``, ``Qwen/Qwen2.5-7B-Instruct``) is sent
   as it is to that OpenAI-compatible endpoint (vLLM, llama.cpp, Ollama's ``/v1``...).
5. Without one, a bare OpenAI model name (``gpt-4o-mini``, ``o3-mini``) goes to OpenAI
   through the SDK; anything else goes to litellm, which knows its provider or says how to
   name one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

OPENROUTER_BASE = "https://openrouter.ai/api/v1"

OPENAI_PROTOCOL_PREFIXES = frozenset(
    {"openai", "custom_openai", "openai_like", "hosted_vllm", "lm_studio", "openrouter"}
)
"""litellm prefixes that name an OpenAI-compatible endpoint: served over plain HTTP."""

NEEDS_OWN_BASE = frozenset({"hosted_vllm", "lm_studio", "custom_openai", "openai_like"})
"""OpenAI-protocol prefixes with no public default URL: without ``api_base``, litellm."""

_LITELLM_PROVIDER_NAMES = """
    anthropic anthropic_text azure azure_ai azure_text bedrock bedrock_mantle sagemaker
    sagemaker_chat sagemaker_nova vertex_ai vertex_ai_beta gemini palm cohere cohere_chat
    replicate huggingface together_ai ai21 ai21_chat baseten vllm nlp_cloud petals oobabooga
    ollama ollama_chat deepinfra perplexity mistral codestral text-completion-codestral groq
    nvidia_nim cerebras volcengine dashscope moonshot deepseek sambanova maritalk voyage
    cloudflare xinference fireworks_ai friendliai featherless_ai watsonx watsonx_text triton
    predibase databricks github tencent llamafile nebius infinity novita snowflake nscale
    xai zai clarifai aleph_alpha anyscale text-completion-openai chatgpt litellm_proxy
    github_copilot meta_llama oci wandb vercel_ai_gateway edenai datarobot jina_ai
    lambda_ai inception text-completion-inception docker_model_runner modelscope
    hyperbolic heroku ovhcloud scaleway minimax gradient_ai amazon_nova v0 morph
"""
LITELLM_PROVIDERS = frozenset(_LITELLM_PROVIDER_NAMES.split())
"""Providers litellm knows by prefix and the OpenAI-compatible transport does not serve."""

_OPENAI_BARE = re.compile(r"^(?:gpt-|chatgpt-|o\d|ft:gpt|codex-)", re.IGNORECASE)
_NOT_CHAT = re.compile(r"instruct|realtime|audio|image|tts|transcribe|embedding", re.IGNORECASE)


@dataclass(frozen=True)
class ScriptedRoute:
    """A scripted model registered with ``mercury_nb.testing``."""

    name: str


@dataclass(frozen=True)
class OpenAIRoute:
    """Served by the OpenAI-compatible transport: ``model`` is sent in the body, to
    ``base_url`` (None: OpenAI itself). ``provider`` is ``openai``, ``openrouter`` or
    ``endpoint`` (a base URL the user gave)."""

    name: str
    model: str
    base_url: str | None
    provider: Literal["openai", "openrouter", "endpoint"]


@dataclass(frozen=True)
class LiteLLMRoute:
    """Served by litellm. ``provider`` is the prefix (or the one a bare name implies, when
    known here), None when only litellm can tell; ``base_url`` the ``api_base`` litellm is
    given (None: the provider's own URL)."""

    name: str
    provider: str | None
    base_url: str | None = None


Route = ScriptedRoute | OpenAIRoute | LiteLLMRoute


def _prefix(name: str) -> tuple[str | None, str]:
    head, sep, rest = name.partition("/")
    return (head.lower(), rest) if sep and rest else (None, name)


def route_model(name: str, api_base: str | None) -> Route:
    """The transport for ``name`` (see the module docstring for the rules)."""
    prefix, rest = _prefix(name)
    base = api_base or None
    if prefix == "scripted":
        return ScriptedRoute(name)
    if prefix in OPENAI_PROTOCOL_PREFIXES:
        if base is not None:
            return OpenAIRoute(name, rest, base, "endpoint")
        if prefix == "openrouter":
            return OpenAIRoute(name, rest, OPENROUTER_BASE, "openrouter")
        if prefix in NEEDS_OWN_BASE:
            return LiteLLMRoute(name, prefix)
        return OpenAIRoute(name, rest, None, "openai")
    if prefix in LITELLM_PROVIDERS:
        return LiteLLMRoute(name, prefix, base)
    if base is not None:
        return OpenAIRoute(name, name, base, "endpoint")
    if prefix is None and _OPENAI_BARE.match(name) and not _NOT_CHAT.search(name):
        return OpenAIRoute(name, name, None, "openai")
    if prefix is None and name.lower().startswith("claude"):
        return LiteLLMRoute(name, "anthropic")
    return LiteLLMRoute(name, prefix)


def uses_litellm(names: tuple[str, ...], api_base: str | None) -> bool:
    """Whether any model of a chain is served by litellm (and so needs it imported)."""
    return any(isinstance(route_model(name, api_base), LiteLLMRoute) for name in names)
