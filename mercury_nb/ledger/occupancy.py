"""Taking a workspace: "is it busy?" and "I now own it" as one ledger transaction.

Two mutating tasks started at the same moment in one workspace, in one process or in two,
must not both run. :meth:`LedgerOccupancy.occupy` decides (the pure
:func:`~mercury_nb.contract.shared_workspace.decide_start`) and writes the task's row as
``running`` in this process inside one ``BEGIN IMMEDIATE`` transaction, so the second of
two racing starts sees the first one's row and is refused.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from mercury_nb.contract.shared_workspace import (
    WorkspaceBusy,
    WorkspaceOccupant,
    decide_start,
)
from mercury_nb.ledger.owner import Owner, current_owner, is_alive
from mercury_nb.ledger.records import TaskHeader

_T = TypeVar("_T")


@dataclass(frozen=True)
class Occupied:
    """The row is ``running`` in this process: the task may start."""


@dataclass(frozen=True)
class Busy:
    """Refused: ``decision`` names the live task already running there."""

    decision: WorkspaceBusy


@dataclass(frozen=True)
class NotClaimed:
    """A continue whose task another process claimed first (or whose status changed)."""


Occupancy = Occupied | Busy | NotClaimed


class LedgerOccupancy:
    """Mixed into :class:`~mercury_nb.ledger.store.Ledger`, which owns ``_write``."""

    clock: Callable[[], float]

    def _write(self, action: Callable[[sqlite3.Connection], _T]) -> _T:
        raise NotImplementedError

    def occupy(self, header: TaskHeader, mode: Literal["execute", "chat"], *,
               claim_from: Sequence[str] | None = None,
               owner: Owner | None = None) -> Occupancy:
        """Refuse when a live task (not this one) runs in ``header.workspace`` and ``mode``
        may change files; else mark this task running in ``owner`` (default: this process)
        in the same transaction. ``claim_from``: a continue, which takes the existing row
        only while its status is one of these (else :class:`NotClaimed`)."""
        who = owner or current_owner()
        now = self.clock()

        def write(conn: sqlite3.Connection) -> Occupancy:
            rows = conn.execute(
                "SELECT id, task, owner_pid, owner_token, parent_id FROM tasks "
                "WHERE workspace = ? AND status = 'running' AND id != ? "
                "ORDER BY updated_at DESC, id", (header.workspace, header.id)).fetchall()
            running = [WorkspaceOccupant(row[0], row[1], is_alive(row[2], row[3]),
                                         sub_agent=row[4] is not None) for row in rows]
            decision = decide_start(mode, running)
            if isinstance(decision, WorkspaceBusy):
                return Busy(decision)
            if claim_from is not None:
                marks = ", ".join("?" for _ in claim_from)
                cursor = conn.execute(
                    "UPDATE tasks SET status = 'running', updated_at = ?, owner_pid = ?, "
                    "owner_token = ?, stop_requested_at = NULL, resumable = 1 "
                    f"WHERE id = ? AND status IN ({marks})",
                    (now, who.pid, who.token, header.id, *claim_from))
                return Occupied() if cursor.rowcount == 1 else NotClaimed()
            conn.execute(
                "INSERT OR IGNORE INTO tasks (id, task, workspace, models, status, "
                "created_at, updated_at, owner_pid, owner_token, parent_id) "
                "VALUES (?, ?, ?, ?, 'running', ?, ?, ?, ?, ?)",
                (header.id, header.task, header.workspace, json.dumps(list(header.models)),
                 now, now, who.pid, who.token, header.parent))
            return Occupied()

        return self._write(write)

    def release(self, task_id: str) -> bool:
        """Remove the row :meth:`occupy` wrote for a task that then never started (no
        event recorded); True when it went."""

        def write(conn: sqlite3.Connection) -> bool:
            cursor = conn.execute(
                "DELETE FROM tasks WHERE id = ? AND status = 'running' AND NOT EXISTS "
                "(SELECT 1 FROM events e WHERE e.task_id = tasks.id)", (task_id,))
            return cursor.rowcount == 1

        return self._write(write)
