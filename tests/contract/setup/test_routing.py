"""Table tests: which transport serves a model name, with and without --api-base."""

from __future__ import annotations

import pytest

from mercury_nb.contract.setup.routing import (
    OPENROUTER_BASE,
    LiteLLMRoute,
    OpenAIRoute,
    Route,
    ScriptedRoute,
    route_model,
    uses_litellm,
)

LOCAL = "http://127.0.0.1:8000/v1"


@pytest.mark.parametrize(
    ("name", "api_base", "route"),
    [
        pytest.param("scripted/demo", None, ScriptedRoute("scripted/demo"), id="scripted"),
        pytest.param("scripted/demo", LOCAL, ScriptedRoute("scripted/demo"),
                     id="scripted-ignores-base"),
        pytest.param("openai/gpt-4o", None, OpenAIRoute("openai/gpt-4o", "gpt-4o", None, "openai"),
                     id="openai-prefix-to-openai"),
        pytest.param("gpt-4o-mini", None,
                     OpenAIRoute("gpt-4o-mini", "gpt-4o-mini", None, "openai"),
                     id="bare-default-model-to-openai"),
        pytest.param("o3-mini", None, OpenAIRoute("o3-mini", "o3-mini", None, "openai"),
                     id="bare-o-series"),
        pytest.param("openai/m", LOCAL, OpenAIRoute("openai/m", "m", LOCAL, "endpoint"),
                     id="openai-prefix-at-base-stripped"),
        pytest.param("llama3", "http://localhost:11434/v1",
                     OpenAIRoute("llama3", "llama3", "http://localhost:11434/v1", "endpoint"),
                     id="ollama-v1-bare-name"),
        pytest.param("Qwen/Qwen2.5-7B-Instruct", LOCAL,
                     OpenAIRoute("Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B-Instruct", LOCAL,
                                 "endpoint"), id="vllm-hf-name-sent-whole"),
        pytest.param("hosted_vllm/meta-llama/Llama-3.1-8B", LOCAL,
                     OpenAIRoute("hosted_vllm/meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B",
                                 LOCAL, "endpoint"), id="hosted-vllm-prefix"),
        pytest.param("lm_studio/qwen", "http://localhost:1234/v1",
                     OpenAIRoute("lm_studio/qwen", "qwen", "http://localhost:1234/v1",
                                 "endpoint"), id="lm-studio-with-base"),
        pytest.param("lm_studio/qwen", None, LiteLLMRoute("lm_studio/qwen", "lm_studio"),
                     id="lm-studio-without-base-litellm-env"),
        pytest.param("openrouter/anthropic/claude-3.5-sonnet", None,
                     OpenAIRoute("openrouter/anthropic/claude-3.5-sonnet",
                                 "anthropic/claude-3.5-sonnet", OPENROUTER_BASE, "openrouter"),
                     id="openrouter-default-base"),
        pytest.param("anthropic/claude-sonnet-4", None,
                     LiteLLMRoute("anthropic/claude-sonnet-4", "anthropic"), id="anthropic"),
        pytest.param("anthropic/claude-sonnet-4", LOCAL,
                     LiteLLMRoute("anthropic/claude-sonnet-4", "anthropic", LOCAL),
                     id="anthropic-keeps-litellm-with-base"),
        pytest.param("gemini/gemini-2.0-flash", None,
                     LiteLLMRoute("gemini/gemini-2.0-flash", "gemini"), id="gemini"),
        pytest.param("azure/my-deployment", None, LiteLLMRoute("azure/my-deployment", "azure"),
                     id="azure"),
        pytest.param("bedrock/anthropic.claude-3", None,
                     LiteLLMRoute("bedrock/anthropic.claude-3", "bedrock"), id="bedrock"),
        pytest.param("ollama/llama3", None, LiteLLMRoute("ollama/llama3", "ollama"),
                     id="ollama-native-api"),
        pytest.param("claude-3-5-haiku-latest", None,
                     LiteLLMRoute("claude-3-5-haiku-latest", "anthropic"), id="bare-claude"),
        pytest.param("gpt-3.5-turbo-instruct", None,
                     LiteLLMRoute("gpt-3.5-turbo-instruct", None), id="completion-model"),
        pytest.param("definitely-not-a-model", None,
                     LiteLLMRoute("definitely-not-a-model", None),
                     id="unknown-bare-name-litellm-explains"),
        pytest.param("acme/model", None, LiteLLMRoute("acme/model", "acme"),
                     id="unknown-prefix-without-base"),
    ],
)  # fmt: skip
def test_route_table(name: str, api_base: str | None, route: Route) -> None:
    assert route_model(name, api_base) == route


@pytest.mark.parametrize(
    ("chain", "api_base", "expected"),
    [
        pytest.param(("openai/gpt-4o-mini", "gpt-4o"), None, False, id="all-openai"),
        pytest.param(("openai/gpt-4o-mini", "anthropic/claude"), None, True,
                     id="a-fallback-needs-litellm"),
        pytest.param(("scripted/x",), None, False, id="scripted"),
        pytest.param(("llama3",), LOCAL, False, id="endpoint"),
    ],
)  # fmt: skip
def test_uses_litellm(chain: tuple[str, ...], api_base: str | None, expected: bool) -> None:
    assert uses_litellm(chain, api_base) is expected
