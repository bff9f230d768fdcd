"""Table tests: which key variable a model needs, and which models of a chain lack one."""

from __future__ import annotations

import pytest

from mercury_nb.contract.setup.keys import (
    MissingKey,
    is_local_url,
    key_variables,
    missing_keys,
    missing_keys_text,
)
from mercury_nb.contract.setup.routing import route_model


@pytest.mark.parametrize(
    ("url", "local"),
    [
        pytest.param("http://127.0.0.1:8000/v1", True, id="loopback-v4"),
        pytest.param("http://[::1]:8000/v1", True, id="loopback-v6"),
        pytest.param("http://localhost:11434/v1", True, id="localhost"),
        pytest.param("http://0.0.0.0:8080", True, id="unspecified"),
        pytest.param("http://192.168.1.20:8000/v1", True, id="private-lan"),
        pytest.param("http://10.0.0.5/v1", True, id="private-10"),
        pytest.param("http://ollama:11434/v1", True, id="container-name"),
        pytest.param("http://gpu-box.local:8000/v1", True, id="mdns"),
        pytest.param("http://host.docker.internal:1234/v1", True, id="docker-host"),
        pytest.param("https://api.openai.com/v1", False, id="openai"),
        pytest.param("https://openrouter.ai/api/v1", False, id="openrouter"),
        pytest.param("https://8.8.8.8/v1", False, id="public-ip"),
        pytest.param("", False, id="empty"),
    ],
)  # fmt: skip
def test_is_local_url(url: str, local: bool) -> None:
    assert is_local_url(url) is local


@pytest.mark.parametrize(
    ("name", "api_base", "variables"),
    [
        pytest.param("gpt-4o-mini", None, ("OPENAI_API_KEY",), id="openai-bare"),
        pytest.param("openai/gpt-4o", None, ("OPENAI_API_KEY",), id="openai-prefix"),
        pytest.param("anthropic/claude-sonnet-4", None,
                     ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"), id="anthropic"),
        pytest.param("claude-3-5-haiku-latest", None,
                     ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"), id="bare-claude"),
        pytest.param("gemini/gemini-2.0-flash", None, ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
                     id="gemini"),
        pytest.param("azure/dep", None,
                     ("AZURE_API_KEY", "AZURE_OPENAI_API_KEY", "AZURE_AD_TOKEN"), id="azure"),
        pytest.param("openrouter/x/y", None, ("OPENROUTER_API_KEY",), id="openrouter"),
        pytest.param("openai/m", "http://127.0.0.1:9/v1", (), id="loopback-needs-none"),
        pytest.param("llama3", "http://localhost:11434/v1", (), id="ollama-v1-needs-none"),
        pytest.param("openai/gpt-4o", "https://api.openai.com/v1", ("OPENAI_API_KEY",),
                     id="openai-through-base"),
        pytest.param("anthropic/claude-3.5", "https://openrouter.ai/api/v1",
                     ("OPENROUTER_API_KEY",), id="anthropic-at-openrouter-takes-the-host's-key"),
        pytest.param("meta/llama", "https://openrouter.ai/api/v1", ("OPENROUTER_API_KEY",),
                     id="openrouter-by-host"),
        pytest.param("m", "https://vllm.example.com/v1", (), id="other-remote-optional"),
        pytest.param("bedrock/anthropic.claude-3", None, (), id="bedrock-aws-credentials"),
        pytest.param("ollama/llama3", None, (), id="ollama-native"),
        pytest.param("scripted/x", None, (), id="scripted"),
        pytest.param("mystery-model", None, (), id="unknown-litellm-tells"),
    ],
)  # fmt: skip
def test_key_variables(name: str, api_base: str | None, variables: tuple[str, ...]) -> None:
    assert key_variables(route_model(name, api_base)) == variables


def _routes(*names: str, api_base: str | None = None) -> list:  # type: ignore[type-arg]
    return [route_model(name, api_base) for name in names]


@pytest.mark.parametrize(
    ("names", "configured", "environ", "missing"),
    [
        pytest.param(("gpt-4o-mini",), False, {}, ("gpt-4o-mini",), id="openai-missing"),
        pytest.param(("gpt-4o-mini",), False, {"OPENAI_API_KEY": "sk-1"}, (), id="openai-set"),
        pytest.param(("gpt-4o-mini",), False, {"OPENAI_API_KEY": "  "}, ("gpt-4o-mini",),
                     id="blank-counts-as-unset"),
        pytest.param(("gpt-4o-mini", "anthropic/claude"), True, {}, (),
                     id="mercury-key-covers-all"),
        pytest.param(("gpt-4o-mini", "anthropic/claude"), False, {"OPENAI_API_KEY": "sk-1"},
                     ("anthropic/claude",), id="fallback-missing"),
        pytest.param(("anthropic/claude",), False, {"ANTHROPIC_AUTH_TOKEN": "t"}, (),
                     id="alternative-variable"),
        pytest.param(("gemini/g", "openrouter/a/b"), False, {}, ("gemini/g", "openrouter/a/b"),
                     id="both-missing-in-order"),
        pytest.param(("scripted/x", "ollama/llama3"), False, {}, (), id="nothing-to-check"),
    ],
)  # fmt: skip
def test_missing_keys(
    names: tuple[str, ...], configured: bool, environ: dict[str, str], missing: tuple[str, ...]
) -> None:
    found = missing_keys(_routes(*names), configured_key=configured, environ=environ)
    assert tuple(item.model for item in found) == missing


def test_missing_key_text_names_variable_and_model() -> None:
    text = missing_keys_text(
        [MissingKey("gpt-4o-mini", ("OPENAI_API_KEY",)),
         MissingKey("anthropic/claude", ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"))]
    )
    assert text == (
        "no API key for the model gpt-4o-mini: set OPENAI_API_KEY or MERCURY_API_KEY; "
        "no API key for the model anthropic/claude: set ANTHROPIC_API_KEY or MERCURY_API_KEY"
    )
