"""The model factory: which class serves a name, with which endpoint, key and token field."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.setup.routing import route_model
from mercury_nb.transport.factory import MissingApiKey, openai_model, resolve_model
from mercury_nb.transport.litellm_model import LiteLLMModel
from mercury_nb.transport.openai_model import NO_KEY_NEEDED, OpenAIModel

LOCAL = "http://127.0.0.1:9/v1"


@pytest.mark.parametrize(
    ("name", "api_base", "cls", "sent", "field"),
    [
        pytest.param("gpt-4o-mini", None, OpenAIModel, "gpt-4o-mini", "max_completion_tokens",
                     id="openai-itself"),
        pytest.param("openai/m", LOCAL, OpenAIModel, "m", "max_tokens", id="endpoint"),
        pytest.param("anthropic/claude-x", None, LiteLLMModel, None, None, id="anthropic"),
    ],
)  # fmt: skip
def test_resolve(
    name: str, api_base: str | None, cls: type, sent: str | None, field: str | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-0123456789")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-0123456789")
    model = resolve_model(name, MercuryConfig(model=name, api_base=api_base))
    assert type(model) is cls
    assert model.name == name
    if isinstance(model, OpenAIModel):
        assert (model.model, model.max_tokens_field, model.base_url) == (sent, field, api_base)


def test_a_missing_key_raises_before_anything_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(MissingApiKey, match="set OPENAI_API_KEY or MERCURY_API_KEY"):
        resolve_model("gpt-4o-mini", MercuryConfig())


@pytest.mark.parametrize(
    ("name", "api_base", "environ", "config_key", "expected"),
    [
        pytest.param("gpt-4o", None, {"OPENAI_API_KEY": "sk-o"}, None, "sk-o", id="provider-var"),
        pytest.param("gpt-4o", None, {"OPENAI_API_KEY": "sk-o"}, "sk-m", "sk-m",
                     id="mercury-key-wins"),
        pytest.param("openrouter/a/b", None, {"OPENROUTER_API_KEY": "sk-r", "OPENAI_API_KEY": "o"},
                     None, "sk-r", id="openrouter-own-var"),
        pytest.param("openrouter/a/b", None, {"OPENAI_API_KEY": "sk-o"}, None, None,
                     id="openai-key-never-sent-to-openrouter"),
        pytest.param("m", LOCAL, {"OPENAI_API_KEY": "sk-o"}, None, None,
                     id="openai-key-never-sent-to-a-local-endpoint"),
        pytest.param("m", "https://llm.example.com/v1", {"OPENAI_API_KEY": "sk-o"}, None, None,
                     id="openai-key-never-sent-to-another-host"),
        pytest.param("m", LOCAL, {"OPENAI_API_KEY": "sk-o"}, "sk-m", "sk-m",
                     id="mercury-key-sent-to-the-endpoint"),
        pytest.param("m", "https://api.openai.com/v1", {"OPENAI_API_KEY": "sk-o"}, None, "sk-o",
                     id="openai-key-to-openai-through-a-base"),
        pytest.param("m", "https://api.openai.com.evil.test/v1", {"OPENAI_API_KEY": "sk-o"},
                     None, None, id="a-lookalike-host-gets-no-key"),
        pytest.param("m", "https://api.groq.com/openai/v1",
                     {"OPENAI_API_KEY": "sk-o", "GROQ_API_KEY": "gsk"}, None, "gsk",
                     id="a-provider-host-gets-its-own-key"),
        pytest.param("m", LOCAL, {}, None, None, id="endpoint-without-key"),
    ],
)  # fmt: skip
def test_openai_model_key(
    name: str, api_base: str | None, environ: dict[str, str], config_key: str | None,
    expected: str | None,
) -> None:
    config = MercuryConfig(model=name, api_base=api_base, api_key=config_key)
    route = route_model(name, api_base)
    model = openai_model(route, config, environ)  # type: ignore[arg-type]
    assert isinstance(model, OpenAIModel)
    assert model.bearer_token == (expected or NO_KEY_NEEDED)  # what its requests send


CONTEXT_WINDOW_PROBE = """
import json, sys
from mercury_nb.transport.model_info import bundled_context_window
print(json.dumps({
    "known": bundled_context_window("openai/gpt-4o-mini", "gpt-4o-mini"),
    "unknown": bundled_context_window("no-such-model-anywhere"),
    "litellm": sorted(m for m in sys.modules if m.split(".")[0] == "litellm"),
}))
"""


def test_context_window_of_openai_models_without_importing_litellm() -> None:
    # a fresh process: in this one an earlier test may have imported litellm already
    done = subprocess.run([sys.executable, "-c", CONTEXT_WINDOW_PROBE], capture_output=True,
                          text=True, timeout=120, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert (found["known"] or 0) >= 100_000
    assert found["unknown"] is None
    assert found["litellm"] == []
