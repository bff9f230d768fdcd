"""Scripted models that change notebooks, for the review tests (tests/browser/test_review.py):
each edits a cell and adds one, so the detail shows a per-cell diff and an open notebook is
reloaded with its changed cells highlighted (or, with unsaved edits, asked about)."""

from __future__ import annotations

import shlex
import sys

import nbformat

from mercury_nb.testing import Turn, call, register_scripted_model

NOTEBOOKS = ("diff", "highlight", "metadata", "keep", "links")
"""One notebook (and scripted model ``scripted/review-<name>``) per test."""
CELLS = ("# Sales", "total = 1 + 2\nprint(total)", "print('unchanged')")
EDITED = "total = 2 + 3\nprint(total)"
ADDED = "print('added by the task')"


def notebook_text() -> str:
    """The notebook each test starts from: a markdown cell and two code cells."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(CELLS[0])]
    nb.cells += [nbformat.v4.new_code_cell(source) for source in CELLS[1:]]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    return nbformat.writes(nb)


def edit_notebook(path: str) -> list[Turn]:
    """Change cell 2's source and insert a new cell 3 in ``path``; say so."""
    return [
        Turn(tool_calls=(call("edit_notebook_cell", path=path, index=1, source=EDITED),
                         call("insert_notebook_cell", path=path, index=2, cell_type="code",
                              source=ADDED))),
        Turn(text=f"Changed the total in {path} and added a cell."),
    ]


def edit_on_disk(path: str) -> list[Turn]:
    """The same change made by a command writing the file, as a script would: a notebook tool's
    edit of an open notebook lands in it live (no reload), so only a change on disk shows the
    reload (or, with unsaved edits, the question) whatever the page has reported open."""
    code = (f"import nbformat; p = {path!r}; nb = nbformat.read(p, as_version=4); "
            f"nb.cells[1].source = {EDITED!r}; "
            f"nb.cells.insert(2, nbformat.v4.new_code_cell({ADDED!r})); nbformat.write(nb, p)")
    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"
    return [
        Turn(tool_calls=(call("run_command", command=command),)),
        Turn(text=f"Changed the total in {path} and added a cell."),
    ]


ON_DISK = ("diff", "highlight", "metadata", "keep")
"""The tests of what a change on disk does to an open notebook (the rest edit with the tools)."""


def register_all(prefix: str = "review") -> None:
    """``scripted/<prefix>-<name>`` for each of :data:`NOTEBOOKS`, changing ``<name>.ipynb``
    on disk (:data:`ON_DISK`) or with the notebook tools."""
    for name in NOTEBOOKS:
        turns = edit_on_disk if name in ON_DISK else edit_notebook
        register_scripted_model(f"{prefix}-{name}", turns(f"{name}.ipynb"))
