"""Scripted models that change notebooks, for the review tests (tests/browser/test_review.py):
each edits a cell and adds one, so the detail shows a per-cell diff and an open notebook is
reloaded with its changed cells highlighted."""

from __future__ import annotations

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


def register_all(prefix: str = "review") -> None:
    """``scripted/<prefix>-<name>`` for each of :data:`NOTEBOOKS`, editing ``<name>.ipynb``."""
    for name in NOTEBOOKS:
        register_scripted_model(f"{prefix}-{name}", edit_notebook(f"{name}.ipynb"))
