"""A task's start snapshot with the user's unsaved notebook cells taken as "before".

When a live edit saved an open notebook that held the user's unsaved work
(:class:`~mercury_nb.contract.unsaved_cells.UserCells`), those cells are the user's: the
snapshot's state of that notebook becomes its state before the task with those cells as the
open document had them, so what the save wrote of them is not counted as the task's change.
"""

from __future__ import annotations

import json
from dataclasses import replace

from mercury_nb.contract.notebook_undo import notebook_bytes, take_cells
from mercury_nb.contract.unsaved_cells import UserCells
from mercury_nb.workspace.file_state import state_from_bytes
from mercury_nb.workspace.snapshot import Snapshot
from mercury_nb.workspace.undo_store import before_states


def _as_saved(notebook: dict[str, object]) -> bytes:
    """The bytes of ``notebook`` as Jupyter saves it (multi-line strings as lists of lines),
    so the diff against the file shows no change in the cells taken from the document."""
    import warnings

    import nbformat  # here: its import costs ~1.5 s, and only unsaved work needs it

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            text = nbformat.writes(nbformat.from_dict(notebook), version=nbformat.NO_CONVERT)
    except Exception:  # nbformat raises many kinds on what it cannot write
        return notebook_bytes(notebook)
    return (text if text.endswith("\n") else text + "\n").encode("utf-8")


def with_user_cells(snapshot: Snapshot, found: UserCells) -> Snapshot:
    """``snapshot`` with ``found``'s cells in its "before" of ``found.path``; the same
    snapshot when that notebook had no readable state before the task (it was created by
    the task, or was too large or unreadable to keep)."""
    if not found.ids:
        return snapshot
    before, data = before_states(snapshot, [found.path], snapshot.max_file_bytes)[found.path]
    if before is None or data is None:
        return snapshot
    try:
        notebook = json.loads(data)
    except ValueError:
        return snapshot
    if not isinstance(notebook, dict):
        return snapshot
    merged = state_from_bytes(_as_saved(take_cells(notebook, found.document, found.ids)),
                              keep_text=True)
    if snapshot.git is None:
        return replace(snapshot, files={**snapshot.files, found.path: merged})
    full = snapshot.git.repo().prefix + found.path
    return replace(snapshot, git=replace(snapshot.git, dirty={**snapshot.git.dirty,
                                                               full: merged}))
