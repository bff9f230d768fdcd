"""A provider's key never leaves for a host that is not the provider's: a hostile or merely
local ``--api-base`` gets ``MERCURY_API_KEY`` (the key set for that base) or no key, never
``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY`` or another provider's variable; the missing-key
check agrees (a local base needs no key). The loopback server records what it receives."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.testing import LoopbackServer, Turn, collect_stream
from mercury_nb.transport.factory import missing_key_error, resolve_model
from mercury_nb.transport.protocol import ModelRequest
from tests.runs.crossproc import cli_env

PROVIDER_KEYS = {
    "OPENAI_API_KEY": "sk-openai-hostile-0123456789",
    "ANTHROPIC_API_KEY": "sk-ant-hostile-0123456789",
    "GEMINI_API_KEY": "gemini-hostile-0123456789",
    "MISTRAL_API_KEY": "mistral-hostile-0123456789",
    "GROQ_API_KEY": "gsk-hostile-0123456789",
    "OPENROUTER_API_KEY": "sk-or-hostile-0123456789",
    "DEEPSEEK_API_KEY": "sk-deepseek-hostile-0123456789",
}
MERCURY_KEY = "mercury-key-for-this-base-0123"
REQUEST = ModelRequest(messages=({"role": "user", "content": "hi"},), max_tokens=16)


def leaked(server: LoopbackServer) -> list[tuple[str, str]]:
    """(header, provider variable) for every provider key some request carried."""
    return [(name, variable) for _, headers in server.posts for name, value in headers.items()
            for variable, key in PROVIDER_KEYS.items() if key in value]


def run_cli(workspace: Path, url: str, env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "mercury_nb", "run", "what is 2+2?", "--chat", "--json",
         "--model", "openai/m", "--api-base", url],
        cwd=workspace, env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout, done.stderr
    outcome: dict[str, Any] = json.loads(done.stdout)
    return outcome


@pytest.mark.parametrize("mercury_key", [None, MERCURY_KEY], ids=["no-mercury-key",
                                                                 "mercury-key"])
def test_the_cli_sends_a_local_base_no_provider_key(tmp_path: Path, mercury_key: str | None
                                                    ) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = {k: v for k, v in cli_env(tmp_path / "home").items()
           if k != "MERCURY_API_KEY" and not k.endswith("_API_KEY")}
    env.update(PROVIDER_KEYS)
    if mercury_key is not None:
        env["MERCURY_API_KEY"] = mercury_key
    with LoopbackServer([Turn("4")]) as server:
        outcome = run_cli(workspace, server.url, env)
    assert outcome["status"] == "completed", outcome["banner"]
    assert server.posts, "no request reached the server"
    assert leaked(server) == []
    sent = {value for _, headers in server.posts for name, value in headers.items()
            if name.lower() == "authorization"}
    assert sent == {f"Bearer {mercury_key}" if mercury_key else "Bearer not-needed"}


LITELLM_MODELS = [
    pytest.param("anthropic/claude-sonnet-4", id="anthropic"),
    pytest.param("gemini/gemini-2.0-flash", id="gemini"),
    pytest.param("mistral/mistral-small", id="mistral"),
    pytest.param("groq/llama-3.1-8b", id="groq"),
    pytest.param("deepseek/deepseek-chat", id="deepseek"),
    pytest.param("openai/gpt-4o", id="openai-prefix"),
    pytest.param("openrouter/meta/llama", id="openrouter-prefix"),
    pytest.param("llama3", id="bare-name"),
]


@pytest.mark.parametrize("name", LITELLM_MODELS)
async def test_no_provider_key_goes_to_a_local_base(
    name: str, monkeypatch: pytest.MonkeyPatch, litellm_module: Any
) -> None:
    for variable, key in PROVIDER_KEYS.items():
        monkeypatch.setenv(variable, key)
    monkeypatch.delenv("MERCURY_API_KEY", raising=False)
    with LoopbackServer([Turn("hello")], on_exhausted="repeat_last") as server:
        config = MercuryConfig(model=name, api_base=server.url, request_timeout_s=10)
        model = resolve_model(name, config)
        # a protocol the loopback server does not speak gets its 404
        with contextlib.suppress(Exception):
            await collect_stream(model, REQUEST)
    assert server.posts, "no request reached the server"
    assert leaked(server) == []


@pytest.mark.parametrize("name", LITELLM_MODELS)
async def test_the_mercury_key_goes_to_the_base(
    name: str, monkeypatch: pytest.MonkeyPatch, litellm_module: Any
) -> None:
    for variable, key in PROVIDER_KEYS.items():
        monkeypatch.setenv(variable, key)
    with LoopbackServer([Turn("hello")], on_exhausted="repeat_last") as server:
        config = MercuryConfig(model=name, api_base=server.url, api_key=MERCURY_KEY,
                               request_timeout_s=10)
        with contextlib.suppress(Exception):
            await collect_stream(resolve_model(name, config), REQUEST)
    assert server.posts, "no request reached the server"
    assert leaked(server) == []
    assert all(any(MERCURY_KEY in value for value in headers.values())
               for _, headers in server.posts)


@pytest.mark.parametrize("name", [p.values[0] for p in LITELLM_MODELS])
def test_a_local_base_needs_no_key(name: str) -> None:
    config = MercuryConfig(model=name, api_base="http://127.0.0.1:9/v1")
    assert missing_key_error(config, environ={}) is None


@pytest.mark.parametrize(("name", "base", "environ", "needed"), [
    pytest.param("anthropic/claude-3.5", "https://openrouter.ai/api/v1",
                 {"ANTHROPIC_API_KEY": "a"}, "OPENROUTER_API_KEY", id="the-host's-own-key"),
    pytest.param("openai/m", "https://api.openai.com/v1", {}, "OPENAI_API_KEY",
                 id="openai-through-a-base"),
    pytest.param("anthropic/claude", None, {}, "ANTHROPIC_API_KEY", id="no-base"),
])
def test_a_provider_base_still_needs_its_own_key(name: str, base: str | None,
                                                 environ: dict[str, str], needed: str) -> None:
    problem = missing_key_error(MercuryConfig(model=name, api_base=base), environ=environ)
    assert problem is not None and needed in problem
