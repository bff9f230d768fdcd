"""delete_notebook_cell, and the compare-and-swap of edits and deletes: a cell the user changed
since the agent last read it is not written, and the result gives its current source."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbformat import v4

from mercury_nb.tools.base import ToolContext, ToolResult
from mercury_nb.tools.registry import ToolRegistry


async def call(registry: ToolRegistry, ctx: ToolContext, name: str, **args: object) -> ToolResult:
    return await registry.execute(name, json.dumps(args), ctx)


@pytest.fixture
def nb_path(root: Path) -> Path:
    notebook = v4.new_notebook()
    notebook.cells = [v4.new_code_cell("sales = load()"), v4.new_code_cell("sales.plot()"),
                      v4.new_markdown_cell("# Notes")]
    for cell, cell_id in zip(notebook.cells, ("load", "plot", "notes"), strict=True):
        cell["id"] = cell_id
    path = root / "analysis.ipynb"
    nbformat.write(notebook, path)
    return path


def user_types(path: Path, index: int, source: str) -> None:
    """The user changes a cell on disk (and saves) after the agent read the notebook."""
    notebook = nbformat.read(path, as_version=4)
    notebook.cells[index].source = source
    nbformat.write(notebook, path)


def sources(path: Path) -> list[str]:
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    return [cell.source for cell in notebook.cells]


async def test_delete_removes_the_cell_by_id(registry: ToolRegistry, ctx: ToolContext,
                                             nb_path: Path) -> None:
    result = await call(registry, ctx, "delete_notebook_cell", path="analysis.ipynb",
                        cell_id="plot")
    assert result.ok, result.content
    assert result.content == "deleted cell 1 (code, id plot) of analysis.ipynb (now 2 cells)"
    assert result.changed_paths == ("analysis.ipynb",)
    assert result.changed_cells == ()  # nothing left to run: the gate asks a fresh run
    assert sources(nb_path) == ["sales = load()", "# Notes"]


async def test_delete_of_an_unknown_id_writes_nothing(registry: ToolRegistry, ctx: ToolContext,
                                                      nb_path: Path) -> None:
    before = nb_path.read_bytes()
    result = await call(registry, ctx, "delete_notebook_cell", path="analysis.ipynb",
                        cell_id="nope")
    assert not result.ok and "no cell with id 'nope' in analysis.ipynb" in result.content
    assert nb_path.read_bytes() == before


@pytest.mark.parametrize(("tool", "args"), [
    ("edit_notebook_cell", {"index": 1, "source": "sales.plot(kind='bar')"}),
    ("delete_notebook_cell", {"cell_id": "plot"}),
])
async def test_a_cell_the_user_changed_since_the_read_is_not_written(
        registry: ToolRegistry, ctx: ToolContext, nb_path: Path, tool: str,
        args: dict[str, object]) -> None:
    assert (await call(registry, ctx, "read_notebook", path="analysis.ipynb")).ok
    user_types(nb_path, 1, "sales.plot(title='mine')")
    before = nb_path.read_bytes()
    refused = await call(registry, ctx, tool, path="analysis.ipynb", **args)
    assert not refused.ok
    assert refused.content.startswith(
        "cell plot of analysis.ipynb changed since you last read it (the user may be editing "
        "it), so nothing was written. Its current source (hash ")
    assert refused.content.endswith("):\nsales.plot(title='mine')")
    assert nb_path.read_bytes() == before
    again = await call(registry, ctx, tool, path="analysis.ipynb", **args)  # now it has read it
    assert again.ok, again.content


async def test_the_agents_own_writes_and_other_cells_do_not_refuse(
        registry: ToolRegistry, ctx: ToolContext, nb_path: Path) -> None:
    await call(registry, ctx, "read_notebook", path="analysis.ipynb")
    first = await call(registry, ctx, "edit_notebook_cell", path="analysis.ipynb", index=1,
                       source="sales.plot(kind='bar')")
    user_types(nb_path, 0, "sales = load('2024.csv')")  # the user works in another cell
    second = await call(registry, ctx, "edit_notebook_cell", path="analysis.ipynb", index=1,
                        source="sales.plot(kind='line')")
    assert first.ok and second.ok, second.content
    assert sources(nb_path)[:2] == ["sales = load('2024.csv')", "sales.plot(kind='line')"]


async def test_an_inserted_cell_names_its_id(registry: ToolRegistry, ctx: ToolContext,
                                             nb_path: Path) -> None:
    result = await call(registry, ctx, "insert_notebook_cell", path="analysis.ipynb", index=0,
                        cell_type="code", source="monthly = sales", after_cell_id="load")
    new_id = nbformat.read(nb_path, as_version=4).cells[1].id
    assert result.changed_cells == (new_id,)
    assert f"a code cell (id {new_id}) at index 1" in result.content
