"""Scripted models that edit a notebook (live when it is open in JupyterLab), for the server
and browser tests of the live-edit route."""

from __future__ import annotations

from mercury_nb.testing import Turn, call

LIVE_SOURCE = "print('sales by month')"


def live_insert(path: str = "sales.ipynb", index: int = 1) -> list[Turn]:
    """Insert a plotting cell at ``index`` of ``path``, then say so."""
    return [
        Turn(tool_calls=(call("insert_notebook_cell", path=path, index=index,
                              cell_type="code", source=LIVE_SOURCE),)),
        Turn(text=f"Added a cell to {path} that plots sales by month."),
    ]


def live_edit(path: str = "sales.ipynb", index: int = 1, source: str = "x = 2") -> list[Turn]:
    """Read ``path``, replace cell ``index``'s source, then report what the tool said."""
    return [
        Turn(tool_calls=(call("read_notebook", path=path),)),
        Turn(tool_calls=(call("edit_notebook_cell", path=path, index=index, source=source),)),
        Turn(text=f"Tried to edit cell {index} of {path}."),
    ]


def register_all(prefix: str = "live") -> None:
    """``scripted/<prefix>-unsaved``, ``-typing``, ``-panel`` and ``-undo`` (fresh scripts,
    each played once in a lab session): the browser tests of live edits name them."""
    from mercury_nb.testing import register_scripted_model

    register_scripted_model(f"{prefix}-unsaved", live_insert("unsaved.ipynb", 3))
    register_scripted_model(f"{prefix}-typing", live_edit("typing.ipynb", 1, "x = 2"))
    register_scripted_model(f"{prefix}-panel", live_insert("panel.ipynb", 1))
    register_scripted_model(f"{prefix}-undo", live_insert("undo.ipynb", 1))
