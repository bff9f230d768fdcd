"""Notebook tools: readable listings, edits that keep the notebook valid, atomic refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat import v4

from mercury_nb.tools.base import ToolContext, ToolResult
from mercury_nb.tools.registry import ToolRegistry


async def call(registry: ToolRegistry, ctx: ToolContext, name: str, **args: object) -> ToolResult:
    return await registry.execute(name, json.dumps(args), ctx)


def valid_cells(path: Path) -> list[Any]:
    """The notebook's cells, after asserting the file on disk validates."""
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    return list(notebook.cells)


@pytest.fixture
def nb_path(root: Path) -> Path:
    notebook = v4.new_notebook()
    code = v4.new_code_cell("print('hi')\n1 + 1", execution_count=3)
    code.outputs = [
        v4.new_output("stream", name="stdout", text="hi\n" + "x" * 2000),
        v4.new_output("execute_result", data={"text/plain": "2"}, execution_count=3),
        v4.new_output("display_data", data={"image/png": "iVBORw0KGgo="}),
        v4.new_output("error", ename="ValueError", evalue="\x1b[31mbad\x1b[0m", traceback=[]),
    ]
    notebook.cells = [v4.new_markdown_cell("# Title"), code, v4.new_raw_cell("raw text")]
    path = root / "analysis.ipynb"
    nbformat.write(notebook, path)
    return path


async def test_read_notebook_lists_cells_and_trimmed_outputs(
    registry: ToolRegistry, ctx: ToolContext, nb_path: Path
) -> None:
    result = await call(registry, ctx, "read_notebook", path="analysis.ipynb")
    assert result.ok and result.read_paths == ("analysis.ipynb",)  # an answer may cite it
    lines = result.content.splitlines()
    assert lines[0] == "analysis.ipynb: 3 cells"
    ids = [cell.id for cell in valid_cells(nb_path)]  # what delete and the kernel runs name
    assert lines[1:5] == [
        f"--- cell 0 · markdown · id {ids[0]} ---",
        "# Title",
        f"--- cell 1 · code · [3] · id {ids[1]} ---",
        "print('hi')",
    ]
    assert "execute_result: 2" in lines
    assert "display_data: [image/png]" in lines
    assert "error: ValueError: bad" in lines
    assert "characters omitted" in result.content  # the 2000-char stream output is trimmed
    assert lines[-2:] == [f"--- cell 2 · raw · id {ids[2]} ---", "raw text"]


async def test_edit_code_cell_clears_outputs_and_stays_valid(
    registry: ToolRegistry, ctx: ToolContext, nb_path: Path
) -> None:
    result = await call(
        registry, ctx, "edit_notebook_cell", path="analysis.ipynb", index=1, source="x = 2"
    )
    assert result == ToolResult(
        ok=True,
        content="edited cell 1 (code) of analysis.ipynb; its outputs were cleared",
        changed_paths=("analysis.ipynb",),
        changed_cells=(valid_cells(nb_path)[1]["id"],),  # the gate asks that this cell ran
    )
    cell = valid_cells(nb_path)[1]
    assert (cell.source, cell.outputs, cell.execution_count) == ("x = 2", [], None)


async def test_edit_markdown_cell(registry: ToolRegistry, ctx: ToolContext, nb_path: Path) -> None:
    result = await call(
        registry, ctx, "edit_notebook_cell", path="analysis.ipynb", index=0, source="# New"
    )
    assert result.ok
    cells = valid_cells(nb_path)
    assert cells[0].source == "# New"
    assert len(cells[1].outputs) == 4  # other cells untouched


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        pytest.param(
            "edit_notebook_cell", {"index": 3, "source": "x"}, "has cells 0..2", id="edit-past-end"
        ),
        pytest.param(
            "edit_notebook_cell", {"index": -1, "source": "x"}, "out of range", id="edit-negative"
        ),
        pytest.param(
            "insert_notebook_cell",
            {"index": 4, "cell_type": "code", "source": "x"},
            "must be 0..3",
            id="insert-past-end",
        ),
    ],
)
async def test_bad_index_leaves_the_file_untouched(
    registry: ToolRegistry,
    ctx: ToolContext,
    nb_path: Path,
    tool: str,
    args: dict[str, Any],
    message: str,
) -> None:
    before = nb_path.read_bytes()
    result = await call(registry, ctx, tool, path="analysis.ipynb", **args)
    assert not result.ok
    assert message in result.content
    assert nb_path.read_bytes() == before


@pytest.mark.parametrize(
    ("index", "cell_type"),
    [
        pytest.param(0, "markdown", id="first"),
        pytest.param(2, "code", id="middle"),
        pytest.param(3, "raw", id="append-at-len"),
    ],
)
async def test_insert_cell_keeps_the_notebook_valid(
    registry: ToolRegistry, ctx: ToolContext, nb_path: Path, index: int, cell_type: str
) -> None:
    result = await call(
        registry,
        ctx,
        "insert_notebook_cell",
        path="analysis.ipynb",
        index=index,
        cell_type=cell_type,
        source="new",
    )
    assert result.ok, result.content
    assert "(now 4 cells)" in result.content
    cells = valid_cells(nb_path)
    assert (cells[index].cell_type, cells[index].source) == (cell_type, "new")
    assert len({cell.id for cell in cells}) == 4


async def test_insert_into_nbformat_4_4_adds_no_cell_id(
    registry: ToolRegistry, ctx: ToolContext, root: Path
) -> None:
    old = {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 4}
    (root / "old.ipynb").write_text(json.dumps(old))
    result = await call(
        registry,
        ctx,
        "insert_notebook_cell",
        path="old.ipynb",
        index=0,
        cell_type="code",
        source="1",
    )
    assert result.ok, result.content
    [cell] = valid_cells(root / "old.ipynb")
    assert "id" not in cell


async def test_insert_at_zero_creates_a_missing_notebook(
    registry: ToolRegistry, ctx: ToolContext, root: Path
) -> None:
    result = await call(
        registry,
        ctx,
        "insert_notebook_cell",
        path="nb/new.ipynb",
        index=0,
        cell_type="markdown",
        source="# Hi",
    )
    assert result.changed_paths == ("nb/new.ipynb",)
    assert [c.source for c in valid_cells(root / "nb" / "new.ipynb")] == ["# Hi"]


async def test_unknown_cell_type_is_an_argument_error(
    registry: ToolRegistry, ctx: ToolContext, nb_path: Path
) -> None:
    result = await call(
        registry,
        ctx,
        "insert_notebook_cell",
        path="analysis.ipynb",
        index=0,
        cell_type="sql",
        source="x",
    )
    assert not result.ok
    assert result.content.startswith("Error: invalid arguments for insert_notebook_cell: cell_type")


async def test_already_invalid_notebook_is_never_written(
    registry: ToolRegistry, ctx: ToolContext, root: Path
) -> None:
    broken = {
        "cells": [{"cell_type": "markdown", "metadata": {}, "source": "x", "bogus": 1, "id": "a1"}],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = root / "broken.ipynb"
    path.write_text(json.dumps(broken))
    before = path.read_bytes()
    result = await call(
        registry, ctx, "edit_notebook_cell", path="broken.ipynb", index=0, source="y"
    )
    assert not result.ok
    assert "invalid, so nothing was written" in result.content
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param("{not json", "is not a readable notebook", id="not-json"),
        pytest.param(None, "no such notebook", id="missing"),
    ],
)
async def test_unreadable_notebooks(
    registry: ToolRegistry, ctx: ToolContext, root: Path, content: str | None, message: str
) -> None:
    if content is not None:
        (root / "x.ipynb").write_text(content)
    result = await call(registry, ctx, "read_notebook", path="x.ipynb")
    assert not result.ok
    assert message in result.content


async def test_notebook_paths_are_confined(registry: ToolRegistry, ctx: ToolContext) -> None:
    result = await call(registry, ctx, "read_notebook", path="../outside/x.ipynb")
    assert result.content == "Error: path escapes the workspace: ../outside/x.ipynb"


def _v3_notebook(path: Path) -> None:
    v3 = nbformat.v3.new_notebook(worksheets=[nbformat.v3.new_worksheet(cells=[
        nbformat.v3.new_code_cell(input="x = 1"),
        nbformat.v3.new_text_cell("markdown", source="# Title"),
    ])])
    path.write_text(nbformat.v3.writes_json(v3))
    assert json.loads(path.read_text())["nbformat"] == 3


@pytest.mark.parametrize(
    ("name", "args", "verb"),
    [
        pytest.param("edit_notebook_cell", {"index": 0, "source": "x = 2"},
                     "edited cell 0 (code) of", id="edit"),
        pytest.param("insert_notebook_cell", {"index": 2, "cell_type": "code",
                                              "source": "y = 3"}, "inserted into", id="insert"),
    ],
)
async def test_editing_a_v3_notebook_says_it_was_converted(
    registry: ToolRegistry, ctx: ToolContext, root: Path, name: str, args: dict[str, Any],
    verb: str,
) -> None:
    path = root / "old.ipynb"
    _v3_notebook(path)
    result = await call(registry, ctx, name, path="old.ipynb", **args)
    assert result.ok, result.content
    assert result.content.startswith(f"{verb} old.ipynb")
    assert result.content.endswith("(converted from nbformat v3 to v4 to edit it)")
    assert json.loads(path.read_text())["nbformat"] == 4
    nbformat.validate(nbformat.read(path, as_version=4))


async def test_insert_after_a_cell_id_lands_below_that_cell_with_its_provenance(
        registry: ToolRegistry, ctx: ToolContext, nb_path: Path) -> None:
    asking = valid_cells(nb_path)[1]["id"]
    ctx.process_scope, ctx.step = "task-7", 3
    result = await call(registry, ctx, "insert_notebook_cell", path="analysis.ipynb", index=0,
                        cell_type="code", source="plot()", after_cell_id=asking)
    assert result.ok and "at index 2" in result.content, result.content
    cells = valid_cells(nb_path)
    assert [c.source for c in cells] == ["# Title", "print('hi')\n1 + 1", "plot()", "raw text"]
    assert cells[2].metadata["mercury"] == {"task": "task-7", "step": 3}
    assert "mercury" not in cells[1].metadata


async def test_an_edited_cell_carries_the_task_and_step(
        registry: ToolRegistry, ctx: ToolContext, nb_path: Path) -> None:
    ctx.process_scope, ctx.step = "task-8", 5
    result = await call(registry, ctx, "edit_notebook_cell", path="analysis.ipynb", index=0,
                        source="# New title")
    assert result.ok
    assert valid_cells(nb_path)[0].metadata["mercury"] == {"task": "task-8", "step": 5}


async def test_no_provenance_outside_a_task_and_an_unknown_id_is_refused(
        registry: ToolRegistry, ctx: ToolContext, nb_path: Path) -> None:
    before = nb_path.read_bytes()
    result = await call(registry, ctx, "insert_notebook_cell", path="analysis.ipynb", index=0,
                        cell_type="code", source="x", after_cell_id="nope")
    assert not result.ok and "no cell with id 'nope' in analysis.ipynb" in result.content
    assert nb_path.read_bytes() == before
    await call(registry, ctx, "insert_notebook_cell", path="analysis.ipynb", index=0,
               cell_type="code", source="x")
    assert "mercury" not in valid_cells(nb_path)[0].metadata
