"""The user's unsaved work in an open notebook that a live edit's save wrote to disk.

A live edit is applied to the open document and the document is then saved, so the user's
unsaved typing in other cells reaches the file with the agent's change. It is the user's,
not the task's: the labextension answers an edit of a document that had unsaved changes
with the document as it was just before the edit, and :func:`user_cells` names the cells
where it differed from the file then. The task's "before" of that notebook takes those
cells as the document had them (``take_cells``), so the change summary, the gate and undo
count only what the agent did, and undo never takes back what the user typed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mercury_nb.contract.notebook_undo import plain_cell

_PAGE_ONLY = frozenset({"trusted"})
"""Cell metadata the open document keeps for itself (the file need not have it)."""


@dataclass(frozen=True)
class UserCells:
    """The cells of notebook ``path`` (workspace-relative) that were the user's unsaved work
    when a live edit saved it: ``ids``, as ``document`` (the open notebook just before the
    edit, nbformat JSON) held them; an id ``document`` lacks is a cell the user deleted."""

    path: str
    document: dict[str, Any]
    ids: frozenset[str]


def _comparable(cell: dict[str, Any]) -> dict[str, Any]:
    plain = plain_cell(cell)
    metadata = {k: v for k, v in (plain.get("metadata") or {}).items() if k not in _PAGE_ONLY}
    plain["metadata"] = metadata
    if not plain.get("attachments"):
        plain.pop("attachments", None)
    if plain.get("cell_type") != "code":
        plain.pop("outputs", None)
        plain.pop("execution_count", None)
    return plain


def _by_id(notebook: Any) -> dict[str, dict[str, Any]] | None:
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        return None
    found: dict[str, dict[str, Any]] = {}
    for cell in cells:
        cell_id = cell.get("id") if isinstance(cell, dict) else None
        if not isinstance(cell_id, str) or not cell_id or cell_id in found:
            return None
        found[cell_id] = cell
    return found


def user_cells(disk: Any, document: Any) -> frozenset[str]:
    """The ids of the cells where ``document`` (the open notebook) differs from ``disk`` (its
    file at the same moment): changed, added or deleted there and not saved. Empty when
    either cannot be matched cell by cell (a cell without an id, an id twice)."""
    on_disk, in_document = _by_id(disk), _by_id(document)
    if on_disk is None or in_document is None:
        return frozenset()
    differ = {i for i, cell in in_document.items()
              if i not in on_disk or _comparable(cell) != _comparable(on_disk[i])}
    return frozenset(differ | (on_disk.keys() - in_document.keys()))
