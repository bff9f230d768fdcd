"""The registry: OpenAI schemas, and every model mistake or tool crash as an error result."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic import BaseModel

from mercury_nb.agent.prompts import system_message
from mercury_nb.contract.permissions import Allow, action_for_tool, decide
from mercury_nb.contract.recovery.memory_governor import (
    estimate_tokens,
    tools_tokens,
    usable_budget,
)
from mercury_nb.tools.base import ToolContext, ToolResult
from mercury_nb.tools.function_tool import FunctionTool
from mercury_nb.tools.registry import MUTATING_TOOLS, ToolRegistry, default_registry

ALL_TOOLS = {
    "list_dir": {"path"},
    "read_file": {"path", "offset", "limit"},
    "create_file": {"path", "content"},
    "write_file": {"path", "content"},
    "edit_file": {"path", "old_text", "new_text"},
    "delete_file": {"path"},
    "run_command": {"command", "timeout_s"},
    "read_notebook": {"path"},
    "edit_notebook_cell": {"path", "index", "source"},
    "insert_notebook_cell": {"path", "index", "cell_type", "source", "after_cell_id"},
    "delete_notebook_cell": {"path", "cell_id"},
    "run_cells": {"path", "cells"},
    "ask_user": {"question", "options", "recommended"},
    "delegate_task": {"task"},
    "finish": {"status", "summary", "blocker", "question"},
}


class NoArgs(BaseModel):
    pass


def _raising(exc: BaseException) -> FunctionTool[NoArgs]:
    async def handler(_args: NoArgs, _ctx: ToolContext) -> ToolResult:
        raise exc

    return FunctionTool(name="boom", description="Raises.", args_model=NoArgs, handler=handler)


def _keys(node: Any) -> set[str]:
    if isinstance(node, dict):
        return set(node) | {k for v in node.values() for k in _keys(v)}
    if isinstance(node, list):
        return {k for v in node for k in _keys(v)}
    return set()


def test_default_registry_has_exactly_the_documented_tools() -> None:
    registry = default_registry()
    schemas = {s["function"]["name"]: s for s in registry.schemas()}
    assert {
        name: set(s["function"]["parameters"]["properties"]) for name, s in schemas.items()
    } == ALL_TOOLS


def test_schemas_are_openai_function_tools_without_pydantic_noise() -> None:
    for schema in default_registry().schemas():
        assert schema["type"] == "function"
        assert set(schema["function"]) == {"name", "description", "parameters"}
        assert schema["function"]["parameters"]["type"] == "object"
        assert not {"title", "anyOf"} & _keys(schema)
    [command] = default_registry().schemas(["run_command"])
    parameters = command["function"]["parameters"]
    assert parameters["required"] == ["command"]
    assert parameters["properties"]["timeout_s"]["type"] == "number"


def test_schemas_for_named_tools_keep_the_order() -> None:
    names = [s["function"]["name"] for s in default_registry().schemas(["edit_file", "list_dir"])]
    assert names == ["edit_file", "list_dir"]
    with pytest.raises(KeyError, match="nope"):
        default_registry().schemas(["nope"])


def test_mutating_tools_match_the_registry() -> None:
    registry = default_registry(kernel=True)
    assert {name for name in registry.names() if registry.is_mutating(name)} == set(MUTATING_TOOLS)


def test_every_built_in_tool_has_its_own_permission_kind() -> None:
    """A built-in tool missing from the permission table would be asked about as a tool from
    outside the package (a notebook cell delete asking in ``edits`` mode); a read tool would
    be allowed in ``read-only``, so a mutating one must never be classed as a read."""
    registry = default_registry(kernel=True)
    kinds = {name: action_for_tool(name).kind for name in registry.names()}
    assert [name for name, kind in kinds.items() if kind == "outside-tool"] == []
    assert sorted(name for name, kind in kinds.items() if kind == "read") == sorted(
        name for name in registry.names() if not registry.is_mutating(name))
    assert decide("edits", (), action_for_tool("delete_notebook_cell", None, "a.ipynb")) == Allow()


def test_the_kernel_tools_are_offered_only_with_a_kernel() -> None:
    assert not {"inspect_variables", "run_in_kernel"} & set(default_registry().names())
    with_kernel = {s["function"]["name"]: s for s in default_registry(kernel=True).schemas()}
    assert set(with_kernel["inspect_variables"]["function"]["parameters"]["properties"]) == {
        "names"}
    assert with_kernel["run_in_kernel"]["function"]["parameters"]["required"] == ["code"]


@pytest.mark.parametrize(
    ("name", "raw", "message"),
    [
        pytest.param("read_file", '{"path": "a.txt"', "are not valid JSON", id="malformed-json"),
        pytest.param("read_file", '["a.txt"]', "must be a JSON object", id="json-list"),
        pytest.param(
            "read_file", "{}", "invalid arguments for read_file: path is required", id="missing-arg"
        ),
        pytest.param(
            "edit_notebook_cell",
            '{"path": "n.ipynb", "index": "first", "source": ""}',
            "invalid arguments for edit_notebook_cell: index:",
            id="wrong-type",
        ),
        pytest.param(
            "write_file", '{"path": "a", "content": 5}', "content:", id="content-not-text"
        ),
    ],
)
async def test_argument_mistakes_become_error_results(
    registry: ToolRegistry, ctx: ToolContext, name: str, raw: str, message: str
) -> None:
    result = await registry.execute(name, raw, ctx)
    assert not result.ok
    assert result.content.startswith("Error: ")
    assert message in result.content


async def test_unknown_tool_lists_the_available_ones(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    result = await registry.execute("launch_rocket", "{}", ctx)
    assert result == ToolResult(
        ok=False,
        content="Error: unknown tool 'launch_rocket'. Available tools: " + ", ".join(ALL_TOOLS),
    )


async def test_a_tool_that_raises_becomes_an_error_result(ctx: ToolContext) -> None:
    registry = ToolRegistry([_raising(RuntimeError("kaput"))])
    result = await registry.execute("boom", "{}", ctx)
    assert result == ToolResult(ok=False, content="Error: boom failed: RuntimeError: kaput")


async def test_cancellation_propagates(ctx: ToolContext) -> None:
    registry = ToolRegistry([_raising(asyncio.CancelledError())])
    with pytest.raises(asyncio.CancelledError):
        await registry.execute("boom", "{}", ctx)


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param("", id="empty-string"),
        pytest.param(None, id="none"),
        pytest.param(json.dumps(json.dumps({"path": "."})), id="double-encoded"),
        pytest.param({"path": "."}, id="mapping"),
    ],
)
async def test_lenient_argument_forms(registry: ToolRegistry, ctx: ToolContext, raw: Any) -> None:
    result = await registry.execute("list_dir", raw, ctx)
    assert result.ok, result.content


def test_duplicate_names_are_refused() -> None:
    registry = default_registry()
    duplicate = _raising(RuntimeError())
    duplicate.name = "list_dir"
    with pytest.raises(ValueError, match="already registered"):
        registry.register(duplicate)


def test_the_compact_set_has_the_same_tools_and_parameters_in_fewer_tokens() -> None:
    registry = default_registry()
    full, compact = registry.schemas(), registry.schemas(compact=True)
    # a small window does without deleting cells (a new tool there did not fit a 2,048 window)
    assert [s["function"]["name"] for s in compact] == [
        s["function"]["name"] for s in full if s["function"]["name"] != "delete_notebook_cell"]
    full = tuple(s for s in full if s["function"]["name"] != "delete_notebook_cell")
    for long, short in zip(full, compact, strict=True):
        parameters, bare = long["function"]["parameters"], short["function"]["parameters"]
        assert set(bare["properties"]) == set(parameters["properties"])
        assert bare.get("required") == parameters.get("required")
        assert bare["type"] == "object"
        assert {p["type"] for p in bare["properties"].values()} == {
            p["type"] for p in parameters["properties"].values()}
        assert "description" not in _keys(bare) and "default" not in _keys(bare)
        assert 0 < len(short["function"]["description"]) < len(long["function"]["description"])
    insert = next(s for s in compact if s["function"]["name"] == "insert_notebook_cell")
    assert insert["function"]["parameters"]["properties"]["cell_type"]["enum"] == [
        "code", "markdown", "raw"]


def test_the_sizes_of_both_tool_sets_in_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    """Measured with the estimate the budget is kept by (12 tools: full 1,525 tokens, compact
    808, the system prompt 256): the full set does not fit a 2,048-token window's budget
    beside the system prompt, the compact one does, in little more than half the tokens."""
    registry = default_registry()
    full = tools_tokens(registry.schemas())
    compact = tools_tokens(registry.schemas(compact=True))
    system = estimate_tokens([system_message("/workspace/project", "execute")])
    with capsys.disabled():
        print(f"\ntool schemas: full {full:,} tokens, compact {compact:,}; system {system:,}")
    assert 1000 <= full <= 2500 and compact <= full * 0.6
    assert system + full > usable_budget(2048, 512)
    assert system + compact <= usable_budget(2048, 512)


def test_a_tool_without_a_brief_is_compacted_to_its_first_sentence() -> None:
    tool = FunctionTool(name="t", description="Does one thing. Then more words about it.",
                        args_model=NoArgs, handler=_raising(ValueError()).handler)
    assert tool.compact_schema["function"]["description"] == "Does one thing."
    named = ToolRegistry([tool]).schemas(["t"], compact=True)
    assert named == (tool.compact_schema,)
