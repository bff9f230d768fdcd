"""Tool-test fixtures: a workspace with an outside folder beside it, a context, a registry."""

from __future__ import annotations

from pathlib import Path

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.tools.base import ToolContext
from mercury_nb.tools.registry import ToolRegistry, default_registry
from mercury_nb.workspace.confinement import Workspace


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The workspace root; ``tmp_path / "outside"`` is a sibling the tools must never reach."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("secret\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


@pytest.fixture
def config(root: Path) -> MercuryConfig:
    return MercuryConfig(workdir=root)


@pytest.fixture
def ctx(root: Path, config: MercuryConfig) -> ToolContext:
    return ToolContext(root=Workspace(root), config=config)


@pytest.fixture
def registry() -> ToolRegistry:
    return default_registry()
