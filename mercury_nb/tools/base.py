"""The tool seam: what a tool is, what it returns, and the context it runs in."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from mercury_nb.contract.config import MercuryConfig


@dataclass(frozen=True)
class ToolResult:
    """What a tool did. ``content`` goes back to the model as the tool message."""

    ok: bool
    content: str
    changed_paths: tuple[str, ...] = ()
    """Workspace-relative paths this call created, modified or deleted."""
    command: str | None = None
    """For run_command: the command line that ran."""
    exit_code: int | None = None
    """For run_command: the process exit code (None when it was killed or never ran)."""
    timed_out: bool = False


@dataclass
class ToolContext:
    """What every tool call gets: the confined workspace root and the config."""

    root: Any  # mercury_nb.workspace.confinement.Workspace
    config: MercuryConfig
    extra: dict[str, Any] = field(default_factory=dict)


class Tool(Protocol):
    """A tool the model can call. ``schema`` is the OpenAI function-tool definition."""

    name: str
    mutating: bool
    schema: dict[str, Any]

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult: ...


class ToolError(Exception):
    """Raised by a tool for an expected failure; the message goes back to the model."""
