"""run_cells' outputs written back into the notebook: into the open document, else on disk.

A cell takes the outputs and execution count of its run only while its source is still the
source that ran (matched by cell id, by index for a notebook without ids): a cell the user
changed meanwhile keeps its own, and a ``%%mercury`` cell always does (its outputs are its
task's widget and verdict; a fresh kernel only skipped it). When JupyterLab has the notebook
open, the labextension sets them in the open document (and saves it, so the file is what the
user sees); otherwise the file is rewritten as it is on disk now (validated, atomically).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mercury_nb.contract.verification_run import is_agent_cell
from mercury_nb.tools import notebook_live as live
from mercury_nb.tools.base import ToolContext
from mercury_nb.tools.function_tool import workspace_of
from mercury_nb.tools.notebooks import cell_source, load_notebook, save_notebook


def write_back(ctx: ToolContext, path: Path, rel: str, finished: list[dict[str, Any]],
               ids: list[str]) -> tuple[bool, list[int]]:
    """Put each finished cell's outputs into the notebook; ``ids``: every cell's id when the
    run started. Whether anything was written, and the indices of the cells left alone."""
    index_of = {int(done["index"]): done for done in finished
                if not is_agent_cell(str(done["source"]))}  # its widget, its verdict stay
    if not index_of:
        return False, []
    named = {i: ids[i] for i in index_of if i < len(ids) and ids[i]}
    ran = [live.RanCell(named.get(i, ""), str(done["source"]), list(done["outputs"]),
                        done.get("execution_count"), i)  # no id (nbformat 4.4): its place
           for i, done in index_of.items()]
    applied = live.outputs(ctx, path, ran)
    if applied is not None:
        by_key = {cell.key: cell.index for cell in ran}
        skipped = sorted(i for c in applied.skipped if (i := by_key.get(c)) is not None)
        return len(skipped) < len(index_of), skipped
    return _write_disk(ctx, path, rel, index_of, named)


def _write_disk(ctx: ToolContext, path: Path, rel: str, index_of: dict[int, dict[str, Any]],
                named: dict[int, str]) -> tuple[bool, list[int]]:
    import nbformat

    ws = workspace_of(ctx)
    notebook, _ = load_notebook(ws, path, rel, ctx.config.file_read_max_bytes)
    by_id = {str(cell.get("id")): cell for cell in notebook.cells if cell.get("id")}
    skipped: list[int] = []
    for index, done in index_of.items():
        if index in named:
            cell = by_id.get(named[index])
        else:
            cell = notebook.cells[index] if index < len(notebook.cells) else None
        if cell is None or cell.cell_type != "code" or cell_source(cell) != done["source"]:
            skipped.append(index)
            continue
        cell.outputs = [nbformat.from_dict(o) for o in done["outputs"]]
        cell.execution_count = done.get("execution_count")
    if len(skipped) == len(index_of):
        return False, skipped
    save_notebook(ws, path, notebook, rel)
    return True, sorted(skipped)
