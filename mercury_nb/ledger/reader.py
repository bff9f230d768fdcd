"""Cheap reads for watchers and stop pollers: one connection, ``PRAGMA data_version`` first.

``PRAGMA data_version`` changes when another connection (any process, or another connection
of this one) commits to the file; it costs no table read. :meth:`LedgerReader.changed` asks
it, and only then do the callers run their small indexed queries.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

from mercury_nb.ledger.files import connect, ledger_path
from mercury_nb.ledger.records import EventRecord

_EVENT_COLUMNS = "at, kind, verdict, decision, text, id, task_id, data"


class LedgerReader:
    """A read connection of its own to the ledger at ``home`` (usable from one thread at a
    time; calls are serialized)."""

    def __init__(self, home: Path | str) -> None:
        self.path = ledger_path(home)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = connect(self.path)
        self._lock = threading.Lock()
        self._version: int | None = None

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def changed(self) -> bool:
        """Whether anything was committed since the last call (True the first time)."""
        with self._lock:
            version = int(self._conn.execute("PRAGMA data_version").fetchone()[0])
        previous, self._version = self._version, version
        return previous != version

    def events_after(self, after: int, task_id: str | None = None, limit: int = 500
                     ) -> list[EventRecord]:
        """Events with an id above ``after`` (of one task, or of all), oldest first."""
        params: tuple[object, ...]
        if task_id is None:
            where, params = "WHERE id > ?", (after,)
        else:
            where, params = "WHERE task_id = ? AND id > ?", (task_id, after)
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_EVENT_COLUMNS} FROM events {where} ORDER BY id LIMIT {int(limit)}",
                params,
            ).fetchall()
        return [EventRecord(*row) for row in rows]

    def stop_requested(self, task_ids: Sequence[str]) -> list[str]:
        """Those of ``task_ids`` that are running and whose stop was requested."""
        if not task_ids:
            return []
        marks = ", ".join("?" for _ in task_ids)
        with self._lock:
            rows = self._conn.execute(
                f"SELECT id FROM tasks WHERE id IN ({marks}) AND status = 'running' "
                "AND stop_requested_at IS NOT NULL",
                tuple(task_ids),
            ).fetchall()
        return [str(row[0]) for row in rows]


def safe_close(reader: LedgerReader | None) -> None:
    if reader is not None:
        with contextlib.suppress(sqlite3.Error):
            reader.close()
