"""The tools that change a notebook's cells: edit, insert and delete, with compare-and-swap.

Every write goes through :func:`~mercury_nb.tools.notebooks.save_notebook` (valid, atomic).
An edit (by index) or a delete (by id) is compared with the hash of the cell's source as the
agent last read it (read_notebook shows and records it per cell id) or last wrote it: in the
notebook open in JupyterLab when it is open there (the document holds the user's unsaved
typing), else in the file. When the cell changed since (the user typed in it), nothing is
written: the result gives the cell's current source, which the agent now knows. A cell the agent
writes carries ``metadata.mercury = {"task": id, "step": n}``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from mercury_nb.contract.live_edit import Refuse, swap
from mercury_nb.tools import notebook_live as live
from mercury_nb.tools.base import ToolContext, ToolError, ToolResult
from mercury_nb.tools.budget import result_budget
from mercury_nb.tools.files import head_tail
from mercury_nb.tools.function_tool import FunctionTool, workspace_of
from mercury_nb.tools.notebooks import (
    cell_ids,
    cell_source,
    cells_count,
    conversion_note,
    load_notebook,
    new_cell,
    new_notebook,
    notebook_at,
    save_notebook,
    short_hash,
    source_hash,
)

if TYPE_CHECKING:
    from nbformat import NotebookNode

_NB_HELP = "Notebook path (.ipynb) relative to the workspace root."
CHANGED_SINCE = ("cell {cell_id} of {rel} changed since you last read it (the user may be "
                 "editing it), so nothing was written. Its current source (hash {now}):\n{source}")


class EditCellArgs(BaseModel):
    path: str = Field(description=_NB_HELP)
    index: int = Field(description="0-based index of the cell to replace the source of.")
    source: str = Field(description="The cell's new source.")


class InsertCellArgs(BaseModel):
    path: str = Field(description=_NB_HELP)
    index: int = Field(description="0-based position of the new cell; len(cells) appends.")
    cell_type: Literal["code", "markdown", "raw"] = Field(description="Kind of cell.")
    source: str = Field(description="The new cell's source.")
    after_cell_id: str | None = Field(
        default=None, description="Put the cell right after the cell with this id instead "
        "of at index (\"below this cell\").")


class DeleteCellArgs(BaseModel):
    path: str
    cell_id: str


def mark_provenance(cell: NotebookNode, ctx: ToolContext) -> None:
    """``metadata.mercury = {"task": id, "step": n}`` on a cell the agent wrote (a task's
    call only: the context names its task and step)."""
    if ctx.process_scope is not None and ctx.step is not None:
        cell.setdefault("metadata", {})["mercury"] = {"task": ctx.process_scope,
                                                      "step": ctx.step}


def _position(notebook: NotebookNode, cell_id: str, rel: str) -> int:
    for position, cell in enumerate(notebook.cells):
        if cell.get("id") == cell_id:
            return position
    raise ToolError(f"no cell with id {cell_id!r} in {rel} (read_notebook shows the cells)")


def _changed_since(ctx: ToolContext, rel: str, cell: NotebookNode) -> ToolResult | None:
    """The refusal when ``cell`` changed since the agent last read or wrote it, else None."""
    cell_id = cell.get("id")
    if not cell_id:
        return None
    expected = ctx.cell_hashes.get((rel, str(cell_id)))
    source = cell_source(cell)
    if expected is None or not isinstance(swap(source, expected), Refuse):
        return None  # the one compare-and-swap decision, as the open document's
    now = source_hash(source)
    ctx.cell_hashes[(rel, str(cell_id))] = now  # the agent has now read it
    content = CHANGED_SINCE.format(cell_id=cell_id, rel=rel, now=short_hash(now), source=source)
    return ToolResult(ok=False, content=head_tail(content, result_budget(ctx)))


def _wrote(ctx: ToolContext, rel: str, cell: NotebookNode) -> tuple[str, ...]:
    ids = cell_ids(cell)
    for cell_id in ids:
        ctx.cell_hashes[(rel, cell_id)] = source_hash(cell_source(cell))
    return ids


def _live_result(ctx: ToolContext, rel: str, done: ToolResult, cell_id: object,
                 source: str) -> ToolResult:
    """The open notebook's answer as the tool's result: a cell it took is one the agent
    wrote (its hash recorded, named for the gate)."""
    if not done.ok or not cell_id:
        return done
    ctx.cell_hashes[(rel, str(cell_id))] = source_hash(source)
    return replace(done, changed_cells=(str(cell_id),))


def edit_notebook_cell(args: EditCellArgs, ctx: ToolContext) -> ToolResult:
    found = notebook_at(ctx, args.path)
    ws, path, rel, notebook, older = (found.ws, found.path, found.rel, found.notebook,
                                      found.older)
    count = len(notebook.cells)
    index = args.index
    if not 0 <= index < count:
        valid = f"cells 0..{count - 1}" if count else "no cells (use insert_notebook_cell)"
        raise ToolError(f"cell index {index} is out of range: {rel} has {valid}")
    cell = notebook.cells[index]
    mark_provenance(cell, ctx)
    done = live.edit(ctx, path, rel, cell, args.source, index)  # open in Lab: compared there
    if done is not None:
        return _live_result(ctx, rel, done, cell.get("id"), args.source)
    refused = _changed_since(ctx, rel, cell)
    if refused is not None:
        return refused
    cell.source = args.source
    note = ""
    if cell.cell_type == "code":
        cell.outputs = []
        cell.execution_count = None
        note = "; its outputs were cleared"
    save_notebook(ws, path, notebook, rel)
    content = f"edited cell {index} ({cell.cell_type}) of {rel}{note}{conversion_note(older)}"
    return ToolResult(ok=True, content=content, changed_paths=(rel,),
                      changed_cells=_wrote(ctx, rel, cell))


def insert_notebook_cell(args: InsertCellArgs, ctx: ToolContext) -> ToolResult:
    ws = workspace_of(ctx)
    path = ws.resolve(args.path)
    rel = ws.rel(path)
    created = not path.exists() and not path.is_symlink()
    if created:
        if args.index != 0:
            raise ToolError(f"no such notebook: {args.path} (to create it, insert at index 0)")
        notebook = new_notebook()
        older = None
    else:
        notebook, older = load_notebook(ws, path, args.path, ctx.config.file_read_max_bytes)
    anchor = args.after_cell_id
    if anchor is not None and not created and anchor not in {c.get("id") for c in notebook.cells}:
        cell = new_cell(args.cell_type, args.source)  # below a cell not saved yet?
        mark_provenance(cell, ctx)
        done = live.insert(ctx, path, rel, notebook.cells, cell, len(notebook.cells), anchor)
        if done is not None:
            return _live_result(ctx, rel, done, cell.get("id"), cell_source(cell))
    index = args.index if anchor is None else _position(notebook, anchor, rel) + 1
    count = len(notebook.cells)
    if not 0 <= index <= count:
        raise ToolError(
            f"cell index {args.index} is out of range: {rel} has {cells_count(count)}, "
            f"so the index must be 0..{count}"
        )
    cell = new_cell(args.cell_type, args.source)
    if notebook.get("nbformat_minor", 0) < 5:
        cell.pop("id", None)  # cell ids only exist from nbformat 4.5 on
    mark_provenance(cell, ctx)
    done = None if created else live.insert(ctx, path, rel, notebook.cells, cell, index)
    if done is not None:
        return _live_result(ctx, rel, done, cell.get("id"), cell_source(cell))
    notebook.cells.insert(index, cell)
    save_notebook(ws, path, notebook, rel)
    verb = "created" if created else "inserted into"
    ids = _wrote(ctx, rel, cell)
    named = f" (id {ids[0]})" if ids else ""
    content = (
        f"{verb} {rel}: a {args.cell_type} cell{named} at index {index} "
        f"(now {cells_count(len(notebook.cells))}){conversion_note(older)}"
    )
    return ToolResult(ok=True, content=content, changed_paths=(rel,), changed_cells=ids)


def delete_notebook_cell(args: DeleteCellArgs, ctx: ToolContext) -> ToolResult:
    found = notebook_at(ctx, args.path)
    ws, path, rel, notebook, older = (found.ws, found.path, found.rel, found.notebook,
                                      found.older)
    index = _position(notebook, args.cell_id, rel)
    cell = notebook.cells[index]
    done = live.delete(ctx, path, rel, cell)  # open in JupyterLab: compared and deleted there
    if done is not None:  # (Ctrl+Z restores it)
        return done
    refused = _changed_since(ctx, rel, cell)
    if refused is not None:
        return refused
    del notebook.cells[index]
    save_notebook(ws, path, notebook, rel)
    ctx.cell_hashes.pop((rel, args.cell_id), None)
    content = (f"deleted cell {index} ({cell.cell_type}, id {args.cell_id}) of {rel} "
               f"(now {cells_count(len(notebook.cells))}){conversion_note(older)}")
    return ToolResult(ok=True, content=content, changed_paths=(rel,))


NOTEBOOK_EDIT_TOOLS: tuple[FunctionTool[Any], ...] = (
    FunctionTool(
        name="edit_notebook_cell",
        description="Replace the source of one notebook cell (a code cell's outputs are cleared).",
        brief="Replace the source of a notebook cell.",
        args_model=EditCellArgs,
        handler=edit_notebook_cell,
        mutating=True,
    ),
    FunctionTool(
        name="insert_notebook_cell",
        description="Insert a new code, markdown or raw cell at an index (len(cells) appends). "
        "Inserting at index 0 of a missing notebook creates it.",
        brief="Insert a notebook cell at index.",
        args_model=InsertCellArgs,
        handler=insert_notebook_cell,
        mutating=True,
    ),
    FunctionTool(
        name="delete_notebook_cell",
        description="Delete a notebook cell by id.",
        compact_set=False,
        args_model=DeleteCellArgs,
        handler=delete_notebook_cell,
        mutating=True,
    ),
)
