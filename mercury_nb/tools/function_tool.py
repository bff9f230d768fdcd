"""FunctionTool: a Tool built from a pydantic argument model and a handler function."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from mercury_nb.tools.base import ToolContext, ToolResult
from mercury_nb.workspace.confinement import Workspace

ArgsT = TypeVar("ArgsT", bound=BaseModel)

SyncHandler = Callable[[ArgsT, ToolContext], ToolResult]
AsyncHandler = Callable[[ArgsT, ToolContext], Awaitable[ToolResult]]


@dataclass(eq=False)
class FunctionTool(Generic[ArgsT]):
    """A tool whose arguments are validated by ``args_model`` before ``handler`` runs.

    A synchronous handler (file and notebook I/O) runs in a worker thread so the kernel's
    event loop never blocks; an async handler (commands) is awaited directly. Invalid
    arguments raise ``pydantic.ValidationError``, which the registry turns into a message.
    """

    name: str
    description: str
    args_model: type[ArgsT]
    handler: SyncHandler[ArgsT] | AsyncHandler[ArgsT]
    mutating: bool = False
    brief: str = ""
    """The compact set's description (for small windows); empty: the first sentence of
    ``description``."""
    compact_set: bool = True
    """Offered in the compact set too; False: only with the full tool definitions (a tool a
    small window can do without, such as delete_notebook_cell)."""
    schema: dict[str, Any] = field(init=False, hash=False, compare=False)
    compact_schema: dict[str, Any] = field(init=False, hash=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "schema", function_schema(self.name, self.description, self.args_model)
        )
        brief = self.brief or self.description.split(". ", 1)[0].rstrip(".") + "."
        object.__setattr__(self, "compact_schema", compact_schema(self.schema, brief))

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        parsed = self.args_model.model_validate(args)
        if inspect.iscoroutinefunction(self.handler):
            result: ToolResult = await self.handler(parsed, ctx)
            return result
        return await asyncio.to_thread(self.handler, parsed, ctx)  # type: ignore[arg-type]


def function_schema(name: str, description: str, args_model: type[BaseModel]) -> dict[str, Any]:
    """The OpenAI function-tool definition for ``args_model``, trimmed of pydantic noise."""
    parameters = _clean(args_model.model_json_schema())
    parameters.setdefault("properties", {})
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


COMPACT_KEPT = frozenset({"type", "properties", "required", "items", "enum"})
"""What a compact schema keeps of a parameter schema: names, types, choices, what is needed."""


def compact_schema(schema: dict[str, Any], brief: str) -> dict[str, Any]:
    """``schema`` with ``brief`` for its description and no parameter docs, defaults or
    bounds: the same tool and parameter names, a fraction of the tokens."""
    function = schema["function"]
    return {"type": "function", "function": {
        "name": function["name"], "description": brief,
        "parameters": _bare(function["parameters"]),
    }}


def _bare(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    bare: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            bare[key] = {name: _bare(sub) for name, sub in value.items()}
        elif key in COMPACT_KEPT:
            bare[key] = _bare(value)
    return bare


def _clean(node: Any) -> Any:
    """Drop titles and null defaults, and collapse ``anyOf [X, null]`` to ``X``."""
    if isinstance(node, list):
        return [_clean(item) for item in node]
    if not isinstance(node, dict):
        return node
    cleaned: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "default" and value is None:
            continue
        cleaned[key] = _clean(value)
    options = cleaned.get("anyOf")
    if isinstance(options, list):
        non_null = [opt for opt in options if opt != {"type": "null"}]
        if len(non_null) == 1 and len(non_null) < len(options):
            del cleaned["anyOf"]
            cleaned.update(non_null[0])
    return cleaned


def workspace_of(ctx: ToolContext) -> Workspace:
    """The context's Workspace (a plain path is accepted and wrapped)."""
    root = ctx.root
    if isinstance(root, Workspace):
        return root
    if isinstance(root, str | Path):
        return Workspace(Path(root))
    raise TypeError(f"ToolContext.root must be a Workspace, got {type(root).__name__}")
