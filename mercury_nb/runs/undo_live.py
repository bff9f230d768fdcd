"""Undo of a notebook open in JupyterLab, cell by cell through the live-edit route.

Each operation of :func:`~mercury_nb.contract.notebook_undo.plan_cells` goes to the open
document as the notebook tools' edits do (the same requests, the same compare-and-swap per
cell, applied as an ordinary change and saved before JupyterLab answers), named as the undo's
own task so the panel does not reload the document after it. The user's unsaved edits in
other cells stay (and are saved with it). A notebook that does not answer its first request is
swapped on disk instead. What the undo kept for itself: the file as JupyterLab saved it, and
the same with the undone cells put back as the task left them, so undoing the undo takes back
those cells only.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, assert_never

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.notebook_undo import (
    Answer,
    CellOp,
    DeleteInserted,
    EditBack,
    Reinsert,
    RestoreOutputs,
    cell_left,
    notebook_bytes,
    plan_cells,
    take_cells,
)
from mercury_nb.contract.undo_plan import LiveRestore
from mercury_nb.tools.notebook_live import LiveApplied, LiveEdits, NotLive, Refused, offer
from mercury_nb.workspace.file_state import DEFAULT_MAX_HASH_BYTES
from mercury_nb.workspace.reading import read_bounded
from mercury_nb.workspace.undo_store import KeptFile, get_blob, put_blob


def live_edits_for(config: MercuryConfig) -> LiveEdits | None:
    """The live-edit tables of the ledger the notebook tools use: the Lab's that started this
    process, else ``config.home``'s (``live_home``; None: unusable, so no Lab)."""
    from mercury_nb.contract.home import live_home
    from mercury_nb.ledger.live_edits import store_for

    try:
        return store_for(live_home(os.environ, config.home))
    except (OSError, sqlite3.Error):
        return None


@dataclass
class LiveUndone:
    """One notebook's live undo: whether a cell was undone, the cells left (path, why), and
    the undo's own states for this file (None when nothing changed)."""

    changed: bool = False
    left: list[tuple[str, str]] = field(default_factory=list)
    state: KeptFile | None = None


def _load(home: Path | str, sha: str) -> Any:
    data = get_blob(home, sha)
    if data is None:
        return None
    try:
        return json.loads(data.decode("utf-8"))
    except ValueError:
        return None


def request_for(op: CellOp, undo_id: str) -> dict[str, Any]:
    """The live-edit request of one operation (as the notebook tools send theirs)."""
    match op:
        case EditBack(cell_id=cell_id, expect=expect, source=source, metadata=metadata):
            return {"op": "edit", "cell_id": cell_id, "read_sha": expect, "source": source,
                    "metadata": metadata, "clear_outputs": False, "task": undo_id}
        case DeleteInserted(cell_id=cell_id, expect=expect):
            return {"op": "delete", "cell_id": cell_id, "read_sha": expect, "task": undo_id}
        case Reinsert(cell_id=cell_id, after_cell_id=after, index=index, cell=cell):
            return {"op": "insert", "cell_id": cell_id, "after_cell_id": after, "index": index,
                    "cell": cell, "task": undo_id}
        case RestoreOutputs():
            return {"op": "outputs", "task": undo_id, "cells": [
                {"cell_id": op.cell_id, "read_sha": op.read_sha, "outputs": op.outputs,
                 "execution_count": op.execution_count, "expect_count": op.expect_count}]}
        case _:
            assert_never(op)


def _answer(op: CellOp, sent: LiveApplied | Refused) -> Answer:
    match sent:
        case LiveApplied(skipped):
            return "skipped" if op.cell_id in skipped else "applied"
        case Refused(gone=gone):
            if isinstance(op, RestoreOutputs):
                return "skipped"
            return "gone" if gone else "refused"
        case _:
            assert_never(sent)


def undo_live(action: LiveRestore, root: Path, config: MercuryConfig, edits: LiveEdits,
              undo_id: str) -> LiveUndone | None:
    """Undo ``action``'s notebook in the open document; None to swap the file on disk (not
    undoable cell by cell, or JupyterLab did not take the first request)."""
    after, before = _load(config.home, action.end), _load(config.home, action.before)
    ops = None if after is None or before is None else plan_cells(after, before)
    if not ops:
        return None
    path = (root / action.path).resolve()
    done = LiveUndone()
    applied: set[str] = set()
    held: set[str] = set()  # cells left: their outputs are not put back either
    for number, op in enumerate(ops):
        if isinstance(op, RestoreOutputs) and op.cell_id in held:
            continue
        sent = offer(edits, config, path, request_for(op, undo_id))
        if isinstance(sent, NotLive):
            if number == 0:
                return None  # not open after all, or no answer: the disk swap of today
            done.left += [(action.path, why) for rest in ops[number:]
                          if (why := cell_left(action.path, rest, "no-answer"))]
            break
        answer = _answer(op, sent)
        why = cell_left(action.path, op, answer)
        if why is not None:
            done.left.append((action.path, why))
            held.add(op.cell_id)
        if answer == "applied":
            applied.add(op.cell_id)
    if applied:
        done.changed = True
        done.state = _kept(config.home, root, action.path, after, frozenset(applied))
    return done


def _kept(home: Path | str, root: Path, rel: str, after: Any, ids: frozenset[str]
          ) -> KeptFile | None:
    """The undo's own states for ``rel``: the file as JupyterLab saved it (its end) and the
    same with the cells ``ids`` as the task left them (its "before"), both kept."""
    try:
        now = read_bounded(root, root / rel, DEFAULT_MAX_HASH_BYTES)
        saved = json.loads(now.decode("utf-8"))
    except (OSError, ValueError):
        return None
    end = put_blob(home, now)
    start = put_blob(home, notebook_bytes(take_cells(saved, after, ids)))
    return KeptFile(before=start, end=end)
