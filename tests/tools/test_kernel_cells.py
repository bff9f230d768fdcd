"""run_cells_in_kernel over a plain namespace: a notebook's cells by id, in notebook order, in
the user's kernel; the first error ends the run and is named with its cell; refusals."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat import v4

from mercury_nb.tools.base import ToolContext
from mercury_nb.tools.kernel_access import NamespaceKernel
from mercury_nb.tools.registry import ToolRegistry, default_registry
from mercury_nb.tools.variables import NO_KERNEL


@pytest.fixture
def kernel_registry() -> ToolRegistry:
    return default_registry(kernel=True)


@pytest.fixture
def nb_path(root: Path) -> Path:
    notebook = v4.new_notebook()
    notebook.cells = [v4.new_code_cell("total = sum(sales)"), v4.new_markdown_cell("# Plot"),
                      v4.new_code_cell("share = total / 0"), v4.new_code_cell("after = 1")]
    for cell, cell_id in zip(notebook.cells, ("sum", "note", "share", "after"), strict=True):
        cell["id"] = cell_id
    path = root / "analysis.ipynb"
    nbformat.write(notebook, path)
    return path


def code_cells(root: Path, name: str, cells: dict[str, str]) -> None:
    """Write notebook ``name`` of code cells (id -> source) under ``root``."""
    notebook = v4.new_notebook()
    notebook.cells = [v4.new_code_cell(source) for source in cells.values()]
    for cell, cell_id in zip(notebook.cells, cells, strict=True):
        cell["id"] = cell_id
    nbformat.write(notebook, root / name)


def with_kernel(ctx: ToolContext, values: dict[str, Any], **changes: Any) -> ToolContext:
    config = ctx.config.with_changes(**changes) if changes else ctx.config
    return replace(ctx, config=config, kernel=NamespaceKernel(values), process_scope="t1")


def test_offered_only_with_a_kernel() -> None:
    assert "run_cells_in_kernel" not in default_registry().names()
    assert "run_cells_in_kernel" in default_registry(kernel=True).names()


async def test_cells_run_in_notebook_order_and_the_first_error_ends_the_run(
        kernel_registry: ToolRegistry, ctx: ToolContext, nb_path: Path) -> None:
    values: dict[str, Any] = {"sales": [3, 4]}
    result = await kernel_registry.execute(
        "run_cells_in_kernel",
        {"path": "analysis.ipynb", "cell_ids": ["after", "share", "note", "sum"]},
        with_kernel(ctx, values))
    assert not result.ok and result.ran_in_kernel
    assert result.kernel_run == "analysis.ipynb"
    assert (result.kernel_cells, result.kernel_numbers) == (("sum", "share"), (1, 3))
    assert result.cell_error == "cell 3: ZeroDivisionError: division by zero"  # the user's
    assert result.content.startswith(  # by index, as read_notebook numbers the cells
        "Ran cells 0, 2 of analysis.ipynb in your kernel; cell 2: ZeroDivisionError: division "
        "by zero. Cells after it did not run.\n--- cell 0 (id sum) ---")
    assert values["total"] == 7 and "after" not in values


async def test_a_clean_run(kernel_registry: ToolRegistry, ctx: ToolContext,
                           nb_path: Path) -> None:
    values: dict[str, Any] = {"sales": [3, 4]}
    result = await kernel_registry.execute(
        "run_cells_in_kernel", {"path": "analysis.ipynb", "cell_ids": ["sum", "after"]},
        with_kernel(ctx, values))
    assert result.ok and result.cell_error == ""
    assert result.content.splitlines()[0] == "Ran cells 0, 3 of analysis.ipynb in your kernel."
    assert values["after"] == 1


async def test_a_cell_over_the_time_limit_is_stopped_and_named(
        kernel_registry: ToolRegistry, ctx: ToolContext, root: Path) -> None:
    code_cells(root, "spin.ipynb", {"spin": "while True: pass"})
    started = time.monotonic()
    result = await kernel_registry.execute(
        "run_cells_in_kernel", {"path": "spin.ipynb", "cell_ids": ["spin"]},
        with_kernel(ctx, {}, kernel_code_timeout_s=0.5))
    assert not result.ok
    assert result.cell_error == ("cell 1: stopped at the time limit (0.5 s, "
                                 "kernel_code_timeout_s)")
    assert time.monotonic() - started < 5


@pytest.mark.parametrize(("args", "message"), [
    ({"path": "analysis.ipynb", "cell_ids": ["nope"]},
     "no cell with id 'nope' in analysis.ipynb"),
    ({"path": "analysis.ipynb", "cell_ids": ["note"]},
     "none of the cells chosen in analysis.ipynb is a code cell"),
])
async def test_refusals(kernel_registry: ToolRegistry, ctx: ToolContext, nb_path: Path,
                        args: dict[str, Any], message: str) -> None:
    values: dict[str, Any] = {}
    result = await kernel_registry.execute("run_cells_in_kernel", args, with_kernel(ctx, values))
    assert not result.ok and message in result.content and not values


async def test_without_a_kernel_it_says_where_it_works(
        kernel_registry: ToolRegistry, ctx: ToolContext, nb_path: Path) -> None:
    result = await kernel_registry.execute(
        "run_cells_in_kernel", {"path": "analysis.ipynb", "cell_ids": ["sum"]}, ctx)
    assert not result.ok and NO_KERNEL in result.content


async def test_it_refuses_while_another_cell_runs(
        kernel_registry: ToolRegistry, ctx: ToolContext, nb_path: Path) -> None:
    values: dict[str, Any] = {"sales": [1]}
    busy = replace(ctx, kernel=NamespaceKernel(values, busy=lambda: True))
    result = await kernel_registry.execute(
        "run_cells_in_kernel", {"path": "analysis.ipynb", "cell_ids": ["sum"]}, busy)
    assert not result.ok and "another cell of this kernel is executing" in result.content
    assert "total" not in values


async def test_a_cell_runs_as_the_kernel_transforms_it_and_a_mercury_cell_never_runs(
        kernel_registry: ToolRegistry, ctx: ToolContext, root: Path) -> None:
    """A cell with IPython syntax (``%matplotlib inline``) runs as the kernel would run it,
    transformed first; a ``%%mercury`` cell chosen too is left out: it would start a task."""
    code_cells(root, "magic.ipynb", {"magic": "%matplotlib inline\nshown = 1",
                                     "agent": "%%mercury\nfix it"})
    values: dict[str, Any] = {}
    kernel = NamespaceKernel(values, transform=lambda source: source.replace(
        "%matplotlib inline", "backend = 'inline'"))
    result = await kernel_registry.execute(
        "run_cells_in_kernel", {"path": "magic.ipynb", "cell_ids": ["magic", "agent"]},
        replace(ctx, kernel=kernel, process_scope="t1"))
    assert result.ok, result.content
    assert values["backend"] == "inline" and values["shown"] == 1
    assert result.kernel_cells == ("magic",)


async def test_a_secret_of_the_namespace_printed_by_a_cell_is_masked(
        kernel_registry: ToolRegistry, ctx: ToolContext, root: Path) -> None:
    code_cells(root, "keys.ipynb", {"show": "print('key:', api_key)"})
    result = await kernel_registry.execute(
        "run_cells_in_kernel", {"path": "keys.ipynb", "cell_ids": ["show"]},
        with_kernel(ctx, {"api_key": "hunter2hunter2"}))
    assert result.ok and "key: ***" in result.content
    assert "hunter2hunter2" not in result.content


async def test_a_user_cell_that_starts_between_two_cells_stops_the_run(
        kernel_registry: ToolRegistry, ctx: ToolContext, root: Path) -> None:
    code_cells(root, "two.ipynb", {"a": "first = 1", "b": "second = 2"})
    values: dict[str, Any] = {}
    result = await kernel_registry.execute(
        "run_cells_in_kernel", {"path": "two.ipynb", "cell_ids": ["a", "b"]},
        replace(ctx, kernel=NamespaceKernel(values, busy=lambda: "first" in values),
                process_scope="t1"))  # a cell of the user's starts once the first has run
    assert not result.ok and result.kernel_cells == ("a",)
    assert "second" not in values  # never interleaved with the user's cell
    assert ("Cell 1 and after did not run: a cell of yours started running in this kernel"
            in result.content)
