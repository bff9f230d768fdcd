"""A task's start snapshot takes the user's unsaved cells a live edit saved as "before":
the change summary then counts only the task's cells, in a git workspace and outside one."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbformat import v4

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.unsaved_cells import UserCells
from mercury_nb.workspace.changes import measure_changes
from mercury_nb.workspace.snapshot import take_snapshot
from mercury_nb.workspace.unsaved_work import with_user_cells
from tests.workspace.git_repo import committed_repo

NB = "work.ipynb"


def notebook(*sources: str) -> nbformat.NotebookNode:
    found = v4.new_notebook()
    found.cells = [v4.new_code_cell(source) for source in sources]
    for n, cell in enumerate(found.cells):
        cell.id = f"c{n}"
    return found


@pytest.mark.parametrize("git", [True, False])
def test_the_users_cells_are_not_the_tasks_change(tmp_path: Path, git: bool) -> None:
    start = nbformat.writes(notebook("a = 1", "b = 2\nb += 1", "c = 3")) + "\n"
    if git:
        root = committed_repo(tmp_path / "ws", {NB: start})
    else:
        root = tmp_path / "ws"
        root.mkdir()
        (root / NB).write_text(start)
    snapshot = take_snapshot(root, MercuryConfig(workdir=root))
    assert (snapshot.git is not None) == git
    typed = notebook("a = 1", "b = 2\nb += 10  # mine", "c = 3")  # not saved
    document = nbformat.from_dict(nbformat.reads(nbformat.writes(typed), as_version=4))
    saved = notebook("a = 1", "b = 2\nb += 10  # mine", "c = 30")  # the task's edit, saved
    nbformat.write(saved, root / NB)

    [change] = measure_changes(snapshot, root).changes
    assert change.notebook is not None and len(change.notebook.cells) == 2  # before: both

    taken = with_user_cells(snapshot, UserCells(NB, dict(document), frozenset({"c1"})))
    [change] = measure_changes(taken, root).changes
    assert change.notebook is not None
    assert [(c.kind, c.number) for c in change.notebook.cells] == [("modified", 3)]
    assert (change.added, change.removed) == (1, 1)  # the file's lines: c = 3 -> c = 30


def test_a_notebook_the_task_created_is_left_as_measured(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    snapshot = take_snapshot(root, MercuryConfig(workdir=root))
    nbformat.write(notebook("x = 1"), root / NB)
    document = dict(nbformat.from_dict(notebook("x = 2")))
    assert with_user_cells(snapshot, UserCells(NB, document, frozenset({"c0"}))) is snapshot
