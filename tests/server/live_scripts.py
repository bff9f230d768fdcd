"""Scripted models that edit a notebook (live when it is open in JupyterLab), for the server
and browser tests of the live-edit route."""

from __future__ import annotations

from mercury_nb.testing import Stall, Turn, call

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


def live_delete(path: str, cell_id: str) -> list[Turn]:
    """Read ``path``, delete the cell ``cell_id``, then say so."""
    return [
        Turn(tool_calls=(call("read_notebook", path=path),)),
        Turn(tool_calls=(call("delete_notebook_cell", path=path, cell_id=cell_id),)),
        Turn(text=f"Deleted cell {cell_id} of {path}."),
    ]


def live_run(path: str) -> list[Turn]:
    """Run every cell of ``path`` (its outputs go into the notebook), then say so."""
    return [
        Turn(tool_calls=(call("run_cells", path=path),)),
        Turn(text=f"Ran every cell of {path}."),
    ]


def live_below(path: str, cell_id: str) -> list[Turn]:
    """Insert a plotting cell of ``path`` right below the cell ``cell_id`` (the asking
    ``%%mercury`` cell), then say so."""
    return [
        Turn(tool_calls=(call("insert_notebook_cell", path=path, index=0, cell_type="code",
                              source=LIVE_SOURCE, after_cell_id=cell_id),)),
        Turn(text=f"Added a cell below yours in {path}."),
    ]


FIXED = "total = sum(sales)\nprint(total)"


def live_fix(path: str, gate: str | None = None) -> list[Turn]:
    """The error -> fix loop: run every cell of ``path``, fix its cell 2 (index), run every
    cell again, then say what was wrong. ``gate``: a file the fix waits for (a test's look
    at the traceback in the open notebook first)."""
    wait = Stall(seconds=120, until=gate) if gate is not None else None
    return [
        Turn(tool_calls=(call("run_cells", path=path),)),
        Turn(tool_calls=(call("edit_notebook_cell", path=path, index=2, source=FIXED),),
             fault=wait),
        Turn(tool_calls=(call("run_cells", path=path),)),
        Turn(text="The third cell summed `sale`, which is not defined; it now sums `sales`, "
                  "and every cell runs."),
    ]


ASKED_COMMAND = "python -c \"print('checked')\""


def live_ask() -> list[Turn]:
    """Run a command (in ``edits`` mode it asks first), then say so."""
    return [Turn(tool_calls=(call("run_command", command=ASKED_COMMAND),)),
            Turn(text="Ran the check.")]


def live_two_edits(path: str) -> list[Turn]:
    """Read ``path``, set its cells 1 and 2 to ``a = 100`` and ``b = 200``, then say so."""
    return [
        Turn(tool_calls=(call("read_notebook", path=path),)),
        Turn(tool_calls=(call("edit_notebook_cell", path=path, index=1, source="a = 100"),
                         call("edit_notebook_cell", path=path, index=2, source="b = 200"))),
        Turn(text=f"Set a and b in {path}."),
    ]


def register_all(prefix: str = "live", fix_gate: str | None = None) -> None:
    """``scripted/<prefix>-unsaved``, ``-typing``, ``-panel``, ``-undo``, ``-kernel``,
    ``-cli``, ``-delete``, ``-outputs``, ``-undone``, ``-below``, ``-fix``, ``-ask``,
    ``-undo-edit`` and ``-no-ids``
    (fresh scripts, each played once in a lab session, or in the kernel or CLI process that
    registers them): the browser tests of live edits name them."""
    from mercury_nb.testing import register_scripted_model

    register_scripted_model(f"{prefix}-unsaved", live_insert("unsaved.ipynb", 3))
    register_scripted_model(f"{prefix}-typing", live_edit("typing.ipynb", 1, "x = 2"))
    register_scripted_model(f"{prefix}-panel", live_insert("panel.ipynb", 1))
    register_scripted_model(f"{prefix}-undo", live_insert("undo.ipynb", 1))
    register_scripted_model(f"{prefix}-kernel", live_insert("kernel-b.ipynb", 1))
    register_scripted_model(f"{prefix}-cli", live_edit("cli.ipynb", 1, LIVE_SOURCE))
    register_scripted_model(f"{prefix}-delete", live_delete("delete.ipynb", "gone"))
    register_scripted_model(f"{prefix}-outputs", live_run("outputs.ipynb"))
    register_scripted_model(f"{prefix}-undone", live_two_edits("undone.ipynb"))
    register_scripted_model(f"{prefix}-below", live_below("below.ipynb", "asking"))
    register_scripted_model(f"{prefix}-fix", live_fix("fix.ipynb", fix_gate))
    register_scripted_model(f"{prefix}-ask", live_ask())
    register_scripted_model(f"{prefix}-undo-edit", live_edit("undo-edit.ipynb", 1, LIVE_SOURCE))
    register_scripted_model(f"{prefix}-no-ids", live_edit("no-ids.ipynb", 1, LIVE_SOURCE))


def cli_main(argv: list[str]) -> int:
    """The CLI (``python -m mercury_nb``'s main) with these scripts registered:
    ``python live_scripts.py run TASK --model scripted/live-cli ...``."""
    from mercury_nb.cli import main

    register_all()
    return main(argv)


if __name__ == "__main__":
    import sys

    raise SystemExit(cli_main(sys.argv[1:]))
