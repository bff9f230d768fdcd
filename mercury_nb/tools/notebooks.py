"""Notebooks for the tools: read_notebook, and loading and saving them valid and atomically."""

from __future__ import annotations

import json
import os
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from mercury_nb.contract.live_edit import source_sha as source_hash
from mercury_nb.contract.redaction import known_secrets
from mercury_nb.tools.base import ToolContext, ToolError, ToolResult
from mercury_nb.tools.budget import result_budget
from mercury_nb.tools.file_reading import refuse_unreadable
from mercury_nb.tools.files import head_tail, read_text
from mercury_nb.tools.function_tool import FunctionTool, workspace_of
from mercury_nb.workspace.atomic import atomic_write_text
from mercury_nb.workspace.confinement import Workspace

if TYPE_CHECKING:
    from nbformat import NotebookNode

OUTPUT_ITEM_CHARS = 600
"""Characters kept from one output of a cell."""
CELL_OUTPUT_CHARS = 2000
"""Characters kept from all outputs of one cell."""
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_NB_HELP = "Notebook path (.ipynb) relative to the workspace root."



def _nbformat() -> Any:
    """nbformat, imported on first use: with jsonschema's format checkers it takes seconds,
    which the first model request of every task must not wait for."""
    import nbformat

    return nbformat


def _reads(text: str, **kwargs: Any) -> NotebookNode:
    node: NotebookNode = _nbformat().reads(text, **kwargs)
    return node


def _writes(notebook: NotebookNode) -> str:
    return str(_nbformat().writes(notebook))


def new_notebook() -> NotebookNode:
    node: NotebookNode = _nbformat().v4.new_notebook()
    return node


def new_cell(cell_type: str, source: str) -> NotebookNode:
    factory: Callable[[str], NotebookNode] = getattr(_nbformat().v4, f"new_{cell_type}_cell")
    return factory(source)


class NotebookArgs(BaseModel):
    path: str = Field(description=_NB_HELP)


def load_notebook(ws: Workspace, path: Path, shown: str,
                  max_bytes: int) -> tuple[NotebookNode, int | None]:
    """The notebook at ``path`` as nbformat v4 (read once), and the nbformat major version
    it is stored in when that is older than 4 (it is converted, and an edit writes it back
    as v4), else None; or a ToolError saying why it cannot be read (a notebook over
    ``max_bytes`` is refused by its size before it is read)."""
    if path.is_dir():
        raise ToolError(f"{shown} is a directory, not a notebook")
    if not path.exists():
        raise ToolError(f"no such notebook: {shown}")
    text = read_text(ws, path, shown, max_bytes)
    try:
        notebook = _reads(text, as_version=4, capture_validation_error={})
    except Exception as exc:
        raise ToolError(f"{shown} is not a readable notebook: {_first_line(exc)}") from exc
    try:
        major = json.loads(text).get("nbformat")
    except (ValueError, AttributeError):
        major = None
    return notebook, major if isinstance(major, int) and major < 4 else None


def conversion_note(major: int | None) -> str:
    return "" if major is None else f" (converted from nbformat v{major} to v4 to edit it)"


def save_notebook(ws: Workspace, path: Path, notebook: NotebookNode, shown: str) -> None:
    """Validate, then write atomically; an invalid result is refused and nothing is written."""
    if notebook.get("nbformat_minor", 0) >= 5:
        for cell in notebook.cells:
            cell.setdefault("id", uuid.uuid4().hex[:8])
    nbformat = _nbformat()
    try:
        nbformat.validate(notebook)
    except nbformat.ValidationError as exc:
        raise ToolError(
            f"the change would leave {shown} invalid, so nothing was written: {_first_line(exc)}"
        ) from exc
    text = _writes(notebook)
    try:
        atomic_write_text(path, text if text.endswith("\n") else text + "\n", root=ws.root,
                          make_parents=True)
    except OSError as error:
        raise refuse_unreadable(error, shown) from error


def cell_ids(cell: NotebookNode) -> tuple[str, ...]:
    """The cell's id, for the gate (none before nbformat 4.5)."""
    cell_id = cell.get("id")
    return (str(cell_id),) if cell_id else ()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def cells_count(count: int) -> str:
    return f"{count} cell{'' if count == 1 else 's'}"


def _clip(text: str, limit: int) -> str:
    return head_tail(text, limit) if len(text) > limit else text


def short_hash(full: str) -> str:
    """The 12 hex digits of a source hash the model is shown."""
    return full[:12]


def remember_sources(ctx: ToolContext, rel: str, notebook: NotebookNode) -> None:
    """Record each cell's source hash as the agent now knows it."""
    for cell in notebook.cells:
        if cell.get("id"):
            ctx.cell_hashes[(rel, str(cell.id))] = source_hash(cell_source(cell))


def cell_source(cell: NotebookNode) -> str:
    """A cell's source as one string."""
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _output_text(output: Mapping[str, Any]) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        text = output.get("text", "")
        text = "".join(text) if isinstance(text, list) else str(text)
        return f"{output.get('name', 'stdout')}: {text.rstrip()}"
    if kind == "error":
        return f"error: {output.get('ename', '')}: {_ANSI.sub('', str(output.get('evalue', '')))}"
    data = output.get("data", {})
    plain = data.get("text/plain")
    if plain is not None:
        plain = "".join(plain) if isinstance(plain, list) else str(plain)
        others = [m for m in data if m != "text/plain"]
        extra = f" [also: {', '.join(others)}]" if others else ""
        return f"{kind}: {plain.rstrip()}{extra}"
    return f"{kind}: [{', '.join(data) or 'no data'}]"


def outputs_text(outputs: Sequence[Mapping[str, Any]]) -> str:
    """A cell's outputs as the model reads them: one line each, trimmed (as read_notebook)."""
    rendered = "\n".join(_clip(_output_text(o), OUTPUT_ITEM_CHARS) for o in outputs)
    return "outputs:\n" + _clip(rendered, CELL_OUTPUT_CHARS)


def render_notebook(notebook: NotebookNode, shown: str) -> str:
    """Cells with index, type, id, source and trimmed outputs, as the model reads them."""
    cells = notebook.cells
    parts = [f"{shown}: {cells_count(len(cells))}"]
    for index, cell in enumerate(cells):
        header = f"--- cell {index} · {cell.cell_type}"
        if cell.cell_type == "code" and cell.get("execution_count") is not None:
            header += f" · [{cell.execution_count}]"
        if cell.get("id"):
            header += f" · id {cell.id}"
        parts.append(header + " ---")
        parts.append(cell_source(cell) or "(empty)")
        outputs = cell.get("outputs", []) if cell.cell_type == "code" else []
        if outputs:
            parts.append(outputs_text(outputs))
    return "\n".join(parts)


@dataclass(frozen=True)
class NotebookAt:
    """The notebook a tool call names: the workspace, its resolved ``path`` and ``rel`` (to
    the root), the ``notebook`` as v4, and the major version it is stored in when older
    (``older``, as :func:`load_notebook` says)."""

    ws: Workspace
    path: Path
    rel: str
    notebook: NotebookNode
    older: int | None


def notebook_at(ctx: ToolContext, shown: str) -> NotebookAt:
    """Resolve ``shown`` (a tool argument) in the context's workspace and load the notebook
    there (a ToolError says why it cannot be)."""
    ws = workspace_of(ctx)
    path = ws.resolve(shown)
    notebook, older = load_notebook(ws, path, shown, ctx.config.file_read_max_bytes)
    return NotebookAt(ws, path, ws.rel(path), notebook, older)


def read_notebook(args: NotebookArgs, ctx: ToolContext) -> ToolResult:
    found = notebook_at(ctx, args.path)
    notebook = found.notebook
    content = render_notebook(notebook, found.rel)
    remember_sources(ctx, found.rel, notebook)
    secrets = known_secrets(ctx.config, os.environ)
    return ToolResult(ok=True, content=head_tail(content, result_budget(ctx), secrets=secrets),
                      read_paths=(found.rel,))


NOTEBOOK_TOOLS: tuple[FunctionTool[Any], ...] = (
    FunctionTool(
        name="read_notebook",
        description="Read a Jupyter notebook: every cell with its index, type, source and "
        "trimmed outputs.",
        brief="Read a notebook's cells.",
        args_model=NotebookArgs,
        handler=read_notebook,
    ),
)
"""read_notebook; the tools that change cells are in :mod:`~mercury_nb.tools.notebook_edits`."""
