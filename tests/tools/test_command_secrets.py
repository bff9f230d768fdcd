"""run_command starts without your secrets: a planted key is absent from what a command sees,
unless it is handed on with ``pass_env`` (the tool-level half of issue 21 item 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.tools.base import ToolContext
from mercury_nb.tools.registry import ToolRegistry
from mercury_nb.workspace.confinement import Workspace

PLANTED = {
    "OPENAI_API_KEY": "sk-plantedOpenAIkey0123456789",
    "MY_SERVICE_TOKEN": "tok-planted-service-4711",
    "DB_PASSWORD": "pw-planted-db-9876",
    "AWS_SECRET_ACCESS_KEY": "aws-planted-secret-abcdef",
    "MERCURY_API_KEY": "mk-planted-mercury-key-555",
}


def _seen(root: Path) -> dict[str, str]:
    """The environment the command wrote to env.txt (read here, unredacted)."""
    lines = (root / "env.txt").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line)


async def _env_of(registry: ToolRegistry, root: Path, config: MercuryConfig) -> dict[str, str]:
    ctx = ToolContext(root=Workspace(root), config=config)
    result = await registry.execute("run_command", json.dumps({"command": "env > env.txt"}), ctx)
    assert result.ok, result.content
    return _seen(root)


async def test_a_planted_key_is_absent_from_a_commands_environment(
    registry: ToolRegistry, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in PLANTED.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PLAIN_SETTING", "kept-as-is")
    seen = await _env_of(registry, root, MercuryConfig(workdir=root))
    assert [name for name in PLANTED if name in seen] == []
    blob = (root / "env.txt").read_text()
    assert [v for v in PLANTED.values() if v in blob] == []
    assert seen["PLAIN_SETTING"] == "kept-as-is"
    assert seen["PAGER"] == "cat"  # the tool's own settings are still laid over


async def test_pass_env_hands_one_on_deliberately(
    registry: ToolRegistry, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in PLANTED.items():
        monkeypatch.setenv(name, value)
    config = MercuryConfig(workdir=root, pass_env=("MY_SERVICE_TOKEN",))
    seen = await _env_of(registry, root, config)
    assert seen["MY_SERVICE_TOKEN"] == PLANTED["MY_SERVICE_TOKEN"]
    assert [name for name in PLANTED if name in seen] == ["MY_SERVICE_TOKEN"]


async def test_a_variable_holding_the_configured_key_is_withheld_whatever_its_name(
    registry: ToolRegistry, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-configured-through-traitlets-0123"
    monkeypatch.setenv("LLM_CREDENTIAL", key)
    seen = await _env_of(registry, root, MercuryConfig(workdir=root, api_key=key))
    assert "LLM_CREDENTIAL" not in seen

