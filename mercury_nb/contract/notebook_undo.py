"""The live undo of one open notebook: cell operations from the task's end state back to its start.

Pure: the caller gives the notebook as the task left it (``after``) and as it was before
(``before``), parsed from the kept copies. :func:`plan_cells` says, per cell id, what takes it
back: an edited cell edited back, an inserted cell deleted (each compared with the source the
task left, so a cell changed since is never overwritten), a deleted cell inserted again at its
place, outputs the task changed put back. :func:`cell_left` words a cell the open notebook
left alone; :func:`take_cells` builds a notebook with some cells' states taken from another
(what the undo's own record keeps, so the undo can be undone cell by cell too).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, assert_never

from mercury_nb.contract.live_edit import source_sha

LEFT_CELL_CHANGED = "left as is: {path} cell {number} changed after the task (yours?)"
LEFT_CELL_GONE = "left as is: {path} cell {number} is no longer in the notebook"
LEFT_OUTPUTS_CHANGED = ("left as is: the outputs of {path} cell {number} changed after the "
                        "task (yours?)")
LEFT_NO_ANSWER = "left as is: {path} cell {number}: JupyterLab did not answer"

Cell: TypeAlias = dict[str, Any]


@dataclass(frozen=True)
class EditBack:
    """Put a cell the task edited back to its source and metadata before the task, if its
    source is still the one the task left (hash ``expect``); ``number``: 1-based, as left."""

    cell_id: str
    number: int
    expect: str
    source: str
    metadata: dict[str, Any]


@dataclass(frozen=True)
class DeleteInserted:
    """Delete a cell the task inserted, if its source is still the one it left."""

    cell_id: str
    number: int
    expect: str


@dataclass(frozen=True)
class Reinsert:
    """Insert a cell the task deleted again, right after ``after_cell_id`` (None: at the top);
    ``index`` its place before the task; ``number`` 1-based, as before the task."""

    cell_id: str
    number: int
    after_cell_id: str | None
    index: int
    cell: Cell


@dataclass(frozen=True)
class RestoreOutputs:
    """Put back a code cell's outputs and count, if its source is the one before the task
    (hash ``read_sha``) and its count is still the one the task left (``expect_count``)."""

    cell_id: str
    number: int
    read_sha: str
    outputs: list[Any]
    execution_count: int | None
    expect_count: int | None


CellOp: TypeAlias = EditBack | DeleteInserted | Reinsert | RestoreOutputs

Answer = Literal["applied", "refused", "gone", "skipped", "no-answer"]
"""What became of one operation in the open notebook (``skipped``: an outputs request's cell
left alone)."""


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def _output(output: Any) -> Any:
    """An output with its multi-line strings joined (as the open document holds them)."""
    if not isinstance(output, dict):
        return output
    plain = dict(output)
    if isinstance(plain.get("text"), list):
        plain["text"] = _text(plain["text"])
    if isinstance(plain.get("data"), dict):
        plain["data"] = {k: _text(v) if isinstance(v, list) and all(isinstance(s, str) for s in v)
                         else v for k, v in plain["data"].items()}
    return plain


def plain_cell(cell: Cell) -> Cell:
    """``cell`` as the open document takes it: source one string, outputs' strings joined."""
    plain = dict(cell)
    plain["source"] = _text(cell.get("source"))
    if "outputs" in plain:
        plain["outputs"] = [_output(o) for o in plain.get("outputs") or []]
    return plain


def _cells(notebook: Any) -> list[Cell] | None:
    """The cells, each with a unique string id; None when the notebook has no such cells."""
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
        return None
    ids = [c.get("id") for c in cells]
    if not all(isinstance(i, str) and i for i in ids) or len(set(ids)) != len(ids):
        return None
    return cells


def plan_cells(after: Any, before: Any) -> tuple[CellOp, ...] | None:
    """The operations that take the open notebook from ``after`` back to ``before``: edits
    back, then deletes, then re-inserts (in their order before), then outputs. None when it
    cannot be done cell by cell (a cell without an id, an id twice, a cell whose type
    changed): the file is then swapped as a whole."""
    left, first = _cells(after), _cells(before)
    if left is None or first is None:
        return None
    at = {c["id"]: (n, c) for n, c in enumerate(left, 1)}
    was = {c["id"]: (n, c) for n, c in enumerate(first, 1)}
    edits: list[CellOp] = []
    outputs: list[CellOp] = []
    for cell_id, (_, old) in was.items():
        if cell_id not in at:
            continue
        number, new = at[cell_id]
        if new.get("cell_type") != old.get("cell_type"):
            return None
        expect = source_sha(_text(new.get("source")))
        if _text(new.get("source")) != _text(old.get("source")) or (
                new.get("metadata") or {}) != (old.get("metadata") or {}):
            edits.append(EditBack(cell_id, number, expect, _text(old.get("source")),
                                  dict(old.get("metadata") or {})))
        was_out = [_output(o) for o in old.get("outputs") or []]
        if old.get("cell_type") == "code" and (
                [_output(o) for o in new.get("outputs") or []] != was_out
                or new.get("execution_count") != old.get("execution_count")):
            outputs.append(RestoreOutputs(
                cell_id, number, source_sha(_text(old.get("source"))), was_out,
                old.get("execution_count"), new.get("execution_count")))
    deletes: list[CellOp] = [DeleteInserted(i, n, source_sha(_text(c.get("source"))))
                             for i, (n, c) in at.items() if i not in was]
    inserts: list[CellOp] = [
        Reinsert(i, n, first[n - 2]["id"] if n > 1 else None, n - 1, plain_cell(c))
        for i, (n, c) in was.items() if i not in at]
    return (*edits, *deletes, *inserts, *outputs)


def cell_left(path: str, op: CellOp, answer: Answer) -> str | None:
    """Why the open notebook left ``op``'s cell as it is, in the user's words; None when the
    cell is as it was before the task (the operation applied, or its end already so)."""
    if answer == "applied":
        return None
    if answer == "no-answer":
        return LEFT_NO_ANSWER.format(path=path, number=op.number)
    match op:
        case EditBack(number=number):
            text = LEFT_CELL_GONE if answer == "gone" else LEFT_CELL_CHANGED
            return text.format(path=path, number=number)
        case DeleteInserted(number=number):
            return None if answer == "gone" else LEFT_CELL_CHANGED.format(path=path,
                                                                           number=number)
        case Reinsert():
            return None  # refused: a cell with its id is there again (the user's Ctrl+Z)
        case RestoreOutputs(number=number):
            text = LEFT_CELL_GONE if answer == "gone" else LEFT_OUTPUTS_CHANGED
            return text.format(path=path, number=number)
        case _:
            assert_never(op)


def take_cells(base: Any, source: Any, ids: frozenset[str]) -> Any:
    """``base`` with the cells named by ``ids`` as ``source`` has them: replaced, inserted
    after the cell before them in ``source`` (at the top when none is in ``base``), or
    removed when ``source`` has none of that id. Other cells and the metadata stay."""
    cells = [c for c in base.get("cells", []) if not (c.get("id") in ids and not any(
        s.get("id") == c.get("id") for s in source.get("cells", [])))]
    for position, cell in enumerate(source.get("cells", [])):
        cell_id = cell.get("id")
        if cell_id not in ids:
            continue
        found = [i for i, c in enumerate(cells) if c.get("id") == cell_id]
        if found:
            cells[found[0]] = cell
            continue
        anchors = {c.get("id") for c in source["cells"][:position]}
        place = max((i + 1 for i, c in enumerate(cells) if c.get("id") in anchors), default=0)
        cells.insert(place, cell)
    return {**base, "cells": cells}


def notebook_bytes(notebook: Any) -> bytes:
    """A notebook as its file holds it (nbformat's layout: one-space indent, sorted keys)."""
    return (json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
            ).encode("utf-8")
