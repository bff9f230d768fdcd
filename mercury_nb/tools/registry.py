"""ToolRegistry: the tools the model may call, their schemas, and error-proof execution."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from mercury_nb.contract.text_cut import clip
from mercury_nb.contract.vocabulary import MUTATING_TOOLS
from mercury_nb.tools.base import Tool, ToolContext, ToolError, ToolResult
from mercury_nb.workspace.errors import WorkspaceError

_MAX_ERROR_CHARS = 2000


class ToolRegistry:
    """Holds Tool objects by name. ``execute`` never raises for a model's mistake."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool

    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def is_mutating(self, name: str) -> bool:
        tool = self._tools.get(name)
        return tool.mutating if tool is not None else name in MUTATING_TOOLS

    def schemas(
        self, names: Iterable[str] | None = None, *, compact: bool = False
    ) -> tuple[dict[str, Any], ...]:
        """OpenAI function-tool definitions, for all tools or the named ones (in that order);
        ``compact``: the compact set's (short descriptions, for small windows)."""
        if names is None:
            tools = list(self._tools.values())
        else:
            wanted = list(names)
            unknown = [name for name in wanted if name not in self._tools]
            if unknown:
                raise KeyError(f"unknown tools: {', '.join(unknown)}")
            tools = [self._tools[name] for name in wanted]
        if compact:
            return tuple(t.compact_schema for t in tools if getattr(t, "compact_set", True))
        return tuple(tool.schema for tool in tools)

    async def execute(
        self, name: str, raw_arguments: str | Mapping[str, Any] | None, ctx: ToolContext
    ) -> ToolResult:
        """Run one tool call. Model mistakes and tool failures come back as ``ok=False``.

        Only ``asyncio.CancelledError`` (and other non-``Exception`` signals) propagate.
        """
        tool = self._tools.get(name)
        if tool is None:
            available = ", ".join(self._tools) or "(none)"
            return _error(f"unknown tool {name!r}. Available tools: {available}")
        parsed = parse_arguments(name, raw_arguments)
        if isinstance(parsed, str):
            return _error(parsed)
        try:
            return await tool.run(parsed, ctx)
        except asyncio.CancelledError:
            raise
        except (ToolError, WorkspaceError) as exc:
            return _error(str(exc) or f"{name} failed")
        except ValidationError as exc:
            return _error(_describe_validation(name, exc))
        except Exception as exc:
            return _error(f"{name} failed: {type(exc).__name__}: {exc}")


def default_registry(*, kernel: bool = False) -> ToolRegistry:
    """A registry with every built-in tool: files, commands, notebooks (run_cells too: it
    starts a fresh kernel, so every front end has it), ask_user,
    delegate_task and finish; with ``kernel`` (a task from a cell) also inspect_variables
    and run_in_kernel."""
    from mercury_nb.tools.ask_user import ASK_USER_TOOL
    from mercury_nb.tools.cell_runs import RUN_CELLS_TOOL
    from mercury_nb.tools.commands import COMMAND_TOOLS
    from mercury_nb.tools.delegate import DELEGATE_TASK_TOOL
    from mercury_nb.tools.files import FILE_TOOLS
    from mercury_nb.tools.finishing import FINISH_TOOL
    from mercury_nb.tools.kernel_cells import RUN_CELLS_IN_KERNEL_TOOL
    from mercury_nb.tools.kernel_tools import KERNEL_TOOLS
    from mercury_nb.tools.notebook_edits import NOTEBOOK_EDIT_TOOLS
    from mercury_nb.tools.notebooks import NOTEBOOK_TOOLS

    return ToolRegistry(
        [*FILE_TOOLS, *COMMAND_TOOLS, *NOTEBOOK_TOOLS, *NOTEBOOK_EDIT_TOOLS, RUN_CELLS_TOOL,
         *((*KERNEL_TOOLS, RUN_CELLS_IN_KERNEL_TOOL) if kernel else ()),
         ASK_USER_TOOL, DELEGATE_TASK_TOOL, FINISH_TOOL]
    )


def _error(message: str) -> ToolResult:
    message = clip(message, _MAX_ERROR_CHARS)  # redacted before it is cut
    return ToolResult(ok=False, content=f"Error: {message}")


def parse_arguments(name: str, raw: str | Mapping[str, Any] | None) -> dict[str, Any] | str:
    """The arguments as a dict, or a message telling the model what is wrong with them. The
    one reading of a call's arguments: the permission check and the tool see the same dict."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    if isinstance(raw, Mapping):
        return dict(raw)
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        if isinstance(exc, json.JSONDecodeError):
            detail = f"{exc.msg} at character {exc.pos}"
        elif isinstance(exc, ValueError):  # an integer of more digits than Python converts
            detail = "a number too long to read"
        else:
            detail = "nested too deeply"
        return (
            f"the arguments of {name} are not valid JSON ({detail}). "
            "Send one JSON object with the tool's fields."
        )
    if isinstance(value, str):  # some models encode the object twice
        with contextlib.suppress(ValueError, RecursionError):
            value = json.loads(value)
    if not isinstance(value, dict):
        return (
            f"the arguments of {name} must be a JSON object with the tool's fields, "
            f"not a JSON {type(value).__name__}"
        )
    return value


def _describe_validation(name: str, exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        field = ".".join(str(part) for part in error["loc"]) or "arguments"
        if error["type"] == "missing":
            problems.append(f"{field} is required")
        else:
            problems.append(f"{field}: {error['msg']}")
    return f"invalid arguments for {name}: {'; '.join(problems)}"
