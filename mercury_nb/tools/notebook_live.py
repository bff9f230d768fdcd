"""The route of a notebook tool's change into the notebook open in JupyterLab, or to disk.

When the panel reports a notebook open (the ledger's ``open_notebooks``, through the server
extension), a tool writes an edit request and waits up to ``live_edit_wait_s`` for the
labextension's answer: it applies the change to the open document as an ordinary model change
(Ctrl+Z undoes it), saves the document, then acknowledges, so the file on disk is what the
user sees when the tool returns. No Lab, not open, or no answer in time: the caller edits the
file on disk as before.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, assert_never

from mercury_nb.contract.live_edit import (
    Disk,
    Gone,
    Live,
    LiveEditLimits,
    Refuse,
    live_refusal_text,
    route,
    source_sha,
)
from mercury_nb.contract.unsaved_cells import UserCells, user_cells
from mercury_nb.tools.base import LiveEdits, ToolContext, ToolError, ToolResult
from mercury_nb.tools.notebooks import cell_source
from mercury_nb.workspace.reading import FileTooLarge, read_bounded


@dataclass(frozen=True)
class LiveApplied:
    """The open notebook took the change (and was saved); ``skipped``: the cells of an
    outputs request it left alone (changed since they ran); ``document`` and ``user``: the
    open notebook just before the change and the cells where it held the user's unsaved
    work, which the save wrote to disk too (none when it had nothing unsaved)."""

    skipped: tuple[str, ...] = ()
    document: dict[str, Any] | None = None
    user: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Refused:
    """The open notebook refused it: the tool result says why (``gone``: no such cell);
    ``source``: the cell's source there, which the result shows the agent."""

    text: str
    gone: bool = False
    source: str | None = None


@dataclass(frozen=True)
class NotLive:
    """Edit the file on disk: why not live."""

    why: str


Sent = LiveApplied | Refused | NotLive


def send(ctx: ToolContext, path: Path, request: dict[str, Any]) -> Sent:
    """Offer ``request`` to the notebook at ``path`` open in JupyterLab; wait for its answer."""
    read = ctx.config.snapshot_max_file_bytes if ctx.on_user_cells is not None else 0
    return offer(ctx.live_edits, ctx.config, path, request, disk_max_bytes=read)


def offer(edits: LiveEdits | None, limits: LiveEditLimits, path: Path,
          request: dict[str, Any], *, disk_max_bytes: int = 0) -> Sent:
    """:func:`send` through ``edits`` (None: no Lab) with these settings (undo's door).
    ``disk_max_bytes``: the file (up to this size) is read before the change, to tell the
    user's unsaved cells the document's save writes with it (0: not read, none told)."""
    if edits is None:
        return NotLive("no-lab")
    try:
        decision = route(edits.seen_at(path), time.time(), limits)
    except OSError as error:  # an unusable ledger: the disk edit of today
        return NotLive(f"ledger: {error}")
    match decision:
        case Disk(why):
            return NotLive(why)
        case Live():
            pass
    disk = _disk(path, disk_max_bytes)  # the file as the document's save will find it
    request_id = edits.submit(path, request)
    found = _wait(edits, request_id, limits.live_edit_wait_s, limits.live_tick_s)
    if found is None:
        return NotLive("no-answer")
    state, reply = found
    cell = str(reply.get("cell") or request.get("cell_id") or "?")
    if state == "applied":
        skipped = reply.get("skipped")
        document = reply.get("before")
        user = (user_cells(_parsed(disk), document) if isinstance(document, dict)
                else frozenset())
        return LiveApplied(tuple(str(c) for c in skipped) if isinstance(skipped, list) else (),
                           document if user else None, user)
    if state == "refused":
        source = reply.get("source")
        text = live_refusal_text(cell, Refuse(source) if isinstance(source, str) else Gone())
        if isinstance(source, str):
            return Refused(text or f"refused: cell {cell}", source=source)
        return Refused(text or f"refused: cell {cell}", gone=True)
    return NotLive(state)


def _disk(path: Path, max_bytes: int) -> bytes | None:
    if max_bytes <= 0:
        return None
    try:
        return read_bounded(path.parent, path, max_bytes)
    except (OSError, FileTooLarge):
        return None


def _parsed(data: bytes | None) -> Any:
    try:
        return json.loads(data) if data is not None else None
    except ValueError:
        return None


def _wait(edits: LiveEdits, request_id: int, wait_s: float, tick_s: float
          ) -> tuple[str, dict[str, Any]] | None:
    """The answer, or None once withdrawn: a request nobody took within ``wait_s`` is
    withdrawn then; one JupyterLab took gets as long again to be answered."""
    deadline = time.monotonic() + wait_s
    delivered_too = False
    while True:
        found = edits.answer(request_id)
        if found is not None:
            return found
        if time.monotonic() >= deadline:
            if edits.withdraw(request_id, delivered_too=delivered_too):
                return None
            delivered_too = True
            deadline = time.monotonic() + wait_s
        time.sleep(tick_s)


def _key(cell: Any, index: int | None) -> str:
    """How a request names ``cell``: its id; ``#<index>`` in a notebook without cell ids
    (nbformat before 4.5, which JupyterLab keeps so: the open document finds it by place)."""
    return str(cell.get("id") or "") or (f"#{index}" if index is not None else "")


def edit(ctx: ToolContext, path: Path, rel: str, cell: Any, source: str,
         index: int | None = None) -> ToolResult | None:
    """Replace ``cell``'s source (``cell`` as on disk at ``index``, its provenance already
    marked) in the open notebook: the tool's result when done or refused, None to edit the
    file on disk. The caller has checked the file's cell against what the agent last read of
    it; the open document checks its own (the labextension's compare-and-swap on
    ``read_sha``)."""
    key = _key(cell, index)
    if not key:
        return None
    read_sha = ctx.cell_hashes.get((rel, key), source_sha(cell_source(cell)))
    request = {"op": "edit", "cell_id": cell.get("id") or None, "index": index,
               "read_sha": read_sha, "source": source,
               "mercury": cell.get("metadata", {}).get("mercury"),
               "clear_outputs": cell.get("cell_type") == "code"}
    named = f"cell {key}" if cell.get("id") else f"cell index {index}"
    return _result(ctx, path, rel, request, key, source, f"edited {named}")


def insert(ctx: ToolContext, path: Path, rel: str, cells: Any, cell: Any, index: int,
           anchor: str | None = None) -> ToolResult | None:
    """Insert ``cell`` at ``index`` (of the cells on disk, ``cells``) in the open notebook,
    right after the cell before it there: the tool's result, or None to edit on disk.
    ``anchor``: a cell id the file lacks (a cell not saved yet, such as the ``%%mercury``
    cell that asked), which the open document must hold: the cell goes right after it there,
    or nowhere (the document's refusal: :data:`NO_ANCHOR`, raised)."""
    key = _key(cell, index)
    after = anchor or (str(cells[index - 1].get("id") or "") if index > 0 else "")
    request = {"op": "insert", "cell_id": cell.get("id") or None,
               "after_cell_id": after or None, "index": index, "cell": _plain(cell)}
    if anchor:
        request["after_required"] = True
    done = f"inserted a {cell.get('cell_type')} cell" + (f" ({key})" if cell.get("id") else "")
    return _result(ctx, path, rel, request, key, cell_source(cell),
                   f"{done}{f' after cell {after}' if after else ' at the top'}",
                   gone=NO_ANCHOR.format(cell_id=anchor, rel=rel) if anchor else None)


NO_ANCHOR = ("no cell with id {cell_id!r} in {rel}, on disk or in the notebook open in "
             "JupyterLab (read_notebook shows the cells)")


def delete(ctx: ToolContext, path: Path, rel: str, cell: Any) -> ToolResult | None:
    """Delete ``cell`` (as on disk) from the open notebook, compared there with the source the
    agent last read: the tool's result when done or refused, None to edit the file on disk."""
    cell_id = str(cell.get("id") or "")
    if not cell_id:
        return None
    read_sha = ctx.cell_hashes.get((rel, cell_id), source_sha(cell_source(cell)))
    request = {"op": "delete", "cell_id": cell_id, "read_sha": read_sha,
               "task": ctx.process_scope}
    return _result(ctx, path, rel, request, cell_id, None,
                   f"deleted a {cell.get('cell_type')} cell ({cell_id})")


@dataclass(frozen=True)
class RanCell:
    """One cell's run to write back: its id (empty in a notebook without ids), the source
    that ran, its outputs and count, and its ``index`` (how a cell without an id is found)."""

    cell_id: str
    source: str
    outputs: list[dict[str, Any]]
    execution_count: int | None
    index: int | None = None

    @property
    def key(self) -> str:
        """How the request, and a skipped answer, name the cell (:func:`_key`)."""
        return _key({"id": self.cell_id}, self.index)


@dataclass(frozen=True)
class OutputsApplied:
    """The open notebook took the outputs of every cell but ``skipped`` (changed meanwhile)."""

    skipped: tuple[str, ...]


def outputs(ctx: ToolContext, path: Path, cells: list[RanCell]) -> OutputsApplied | None:
    """Set each cell's outputs and execution count in the open notebook, for the cells whose
    source there is still what ran; None to write them on disk."""
    if not cells or not all(c.key for c in cells):
        return None
    request = {"op": "outputs", "task": ctx.process_scope, "cells": [
        {"cell_id": c.key, "read_sha": source_sha(c.source), "outputs": _plain(c.outputs),
         "execution_count": c.execution_count,
         **({"index": c.index} if not c.cell_id else {})}
        for c in cells]}
    sent = send(ctx, path, request)
    match sent:
        case LiveApplied(skipped):
            _user_work(ctx, path, sent)
            return OutputsApplied(skipped)
        case Refused():  # every cell changed while it ran
            return OutputsApplied(tuple(c.key for c in cells))
        case NotLive():
            return None
        case _:
            assert_never(sent)


def _result(ctx: ToolContext, path: Path, rel: str, request: dict[str, Any], cell_id: str,
            source: str | None, done: str, gone: str | None = None) -> ToolResult | None:
    """The open notebook's answer as the tool's result (None: edit on disk). A refusal that
    shows the cell's source there records its hash: the agent has now read it, so a retry
    is compared with what it saw, not with the file, which the user's unsaved typing has
    not reached. ``gone``: the error when the document lacks a cell the request needs."""
    sent = send(ctx, path, request)
    match sent:
        case LiveApplied():
            _user_work(ctx, path, sent)
            if source is None:
                ctx.cell_hashes.pop((rel, cell_id), None)
            else:
                ctx.cell_hashes[(rel, cell_id)] = source_sha(source)
            return ToolResult(ok=True, content=f"{done} in {rel}, open in JupyterLab "
                              "(applied there and saved)", changed_paths=(rel,))
        case Refused(gone=True) if gone is not None:
            raise ToolError(gone)
        case Refused(text, source=current):
            if current is not None:
                ctx.cell_hashes[(rel, cell_id)] = source_sha(current)
            return ToolResult(ok=False, content=text)
        case NotLive():
            return None
        case _:
            assert_never(sent)


def _user_work(ctx: ToolContext, path: Path, applied: LiveApplied) -> None:
    """Tell the task which cells the save wrote of the user's unsaved work (its "before")."""
    if applied.document is None or not applied.user or ctx.on_user_cells is None:
        return
    try:
        rel = path.resolve().relative_to(ctx.root.root).as_posix()
    except ValueError:
        return
    ctx.on_user_cells(UserCells(rel, applied.document, applied.user))


def _plain(value: Any) -> Any:
    """A NotebookNode as plain JSON values."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
