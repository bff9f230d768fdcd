"""The ledger's reads (tasks by id or prefix, by workspace and status; events; checkpoints),
mixed into :class:`~mercury_nb.ledger.store.Ledger`, which owns the connection."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from mercury_nb.ledger.checkpoint_rows import read_checkpoint
from mercury_nb.ledger.records import AmbiguousTaskId, EventRecord, TaskRecord

_T = TypeVar("_T")
_TASK_COLUMNS = (
    "id, task, workspace, models, status, verdict, banner, blocker, changes, evidence, steps, "
    "created_at, updated_at, owner_pid, owner_token, "
    "EXISTS (SELECT 1 FROM checkpoints c WHERE c.task_id = tasks.id) AS has_checkpoint, usage, "
    "answer, providers, parent_id, resumable, cause"
)


class LedgerReads:
    """Read queries over ``_guarded`` (the store's serialized, damage-aware connection)."""

    def _guarded(self, action: Callable[[sqlite3.Connection], _T]) -> _T:
        raise NotImplementedError

    # --- reads ----------------------------------------------------------------------

    def _records(self, where: str, params: Sequence[Any], limit: int | None = None,
                 offset: int = 0) -> list[TaskRecord]:
        sql = f"SELECT {_TASK_COLUMNS} FROM tasks {where} ORDER BY updated_at DESC, id"
        if limit is not None:  # SQLite's integers (a larger number is the caller's error)
            sql += " LIMIT ? OFFSET ?"
            params = (*params, int(limit), int(offset))
        rows = self._guarded(lambda conn: conn.execute(sql, tuple(params)).fetchall())
        return [TaskRecord.from_row(row) for row in rows]

    def get(self, id_or_prefix: str) -> TaskRecord | None:
        """The task with this id, or the only one whose id starts with it."""
        exact = self._records("WHERE id = ?", (id_or_prefix,))
        if exact:
            return exact[0]
        escaped = id_or_prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        found = self._records("WHERE id LIKE ? ESCAPE '\\'", (escaped + "%",))
        if len(found) > 1:
            raise AmbiguousTaskId(id_or_prefix, [r.id for r in found])
        return found[0] if found else None

    def find(self, *, workspace: str | None = None, status: str | None = None,
             limit: int = 50, offset: int = 0) -> list[TaskRecord]:
        """Tasks of a workspace and/or status, the most recently updated first."""
        terms = [(column, value) for column, value in
                 (("workspace", workspace), ("status", status)) if value is not None]
        where = " AND ".join(f"{column} = ?" for column, _ in terms)
        return self._records(f"WHERE {where}" if where else "", [v for _, v in terms],
                             limit, offset)

    def list_tasks(self, limit: int | None = None) -> list[TaskRecord]:
        """Every task, the most recently updated first."""
        return self._records("", (), limit)

    def latest_paused(self, workspace: str) -> TaskRecord | None:
        """The workspace's most recently paused top-level task (a sub-agent reports to its
        parent: plain "continue" never picks one)."""
        found = self._records(
            "WHERE status = 'paused' AND workspace = ? AND parent_id IS NULL", (workspace,), 1
        )
        return found[0] if found else None

    def paused_with_text(self, task: str, workspace: str) -> TaskRecord | None:
        """A paused top-level task of the workspace with exactly this text."""
        found = self._records(
            "WHERE status = 'paused' AND workspace = ? AND task = ? AND parent_id IS NULL",
            (workspace, task), 1,
        )
        return found[0] if found else None

    def children(self, parent_id: str) -> list[TaskRecord]:
        """The sub-agents ``parent_id`` delegated, in the order they started."""
        found = self._records("WHERE parent_id = ?", (parent_id,))
        return sorted(found, key=lambda record: (record.created_at, record.id))

    def events(self, task_id: str, *, progress: bool = False) -> list[EventRecord]:
        """The task's events, oldest first; step, tool and pulse events only with
        ``progress`` (a task's summary leaves them out)."""
        from mercury_nb.agent.events import PROGRESS_KINDS  # here: the store imports light

        skip = "" if progress else f" AND kind NOT IN {tuple(sorted(PROGRESS_KINDS))!r}"
        rows = self._guarded(
            lambda conn: conn.execute(
                "SELECT at, kind, verdict, decision, text, id, task_id, data FROM events "
                f"WHERE task_id = ?{skip} ORDER BY id",
                (task_id,),
            ).fetchall()
        )
        return [EventRecord(*row) for row in rows]

    def checkpoint(self, task_id: str) -> dict[str, Any] | None:
        """The task's latest checkpoint, with its start snapshot put back, or None."""
        return self._guarded(lambda conn: read_checkpoint(conn, task_id))

    def integrity_check(self) -> str:
        """SQLite's ``PRAGMA integrity_check`` answer (``"ok"`` when sound)."""
        rows = self._guarded(lambda conn: conn.execute("PRAGMA integrity_check").fetchall())
        return "\n".join(str(row[0]) for row in rows)

    def known_ids(self, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` name a task in the ledger (asked in chunks of 500)."""

        def read(conn: sqlite3.Connection) -> set[str]:
            found: set[str] = set()
            for start in range(0, len(ids), 500):
                chunk = list(ids[start:start + 500])
                marks = ", ".join("?" for _ in chunk)
                found.update(row[0] for row in conn.execute(
                    f"SELECT id FROM tasks WHERE id IN ({marks})", chunk))
            return found

        return self._guarded(read)
