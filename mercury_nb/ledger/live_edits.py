"""The ledger's live-edit tables: notebooks open in JupyterLab, edit requests and answers."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from mercury_nb.ledger.files import connect, ledger_path

ANSWERS = ("applied", "refused", "not-open")
"""What JupyterLab answers to an edit request it took."""
KEEP_ANSWERED_S = 3600.0
"""Answered and withdrawn requests are deleted this long after they were made."""


class LiveEditStore:
    """One connection to the ledger's live-edit tables (the server's and a task's processes
    each open their own; SQLite's WAL lets them share the file)."""

    def __init__(self, home: Path | str, *, clock: Callable[[], float] = time.time) -> None:
        path = ledger_path(home)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = connect(path)
        self._lock = threading.Lock()
        self._clock = clock

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _run(self, sql: str, params: Iterable[Any] = ()) -> list[Any]:
        with self._lock:
            return self._conn.execute(sql, tuple(params)).fetchall()

    def report_open(self, paths: Iterable[Path]) -> None:
        """JupyterLab has these notebooks open now."""
        now = self._clock()
        with self._lock:
            self._conn.executemany(
                "INSERT INTO open_notebooks (path, seen_at) VALUES (?, ?) "
                "ON CONFLICT(path) DO UPDATE SET seen_at = excluded.seen_at",
                [(str(path), now) for path in paths])

    def report_closed(self, paths: Iterable[Path]) -> None:
        with self._lock:
            self._conn.executemany("DELETE FROM open_notebooks WHERE path = ?",
                                   [(str(path),) for path in paths])

    def seen_at(self, path: Path) -> float | None:
        rows = self._run("SELECT seen_at FROM open_notebooks WHERE path = ?", (str(path),))
        return float(rows[0][0]) if rows else None

    def submit(self, path: Path, request: dict[str, Any]) -> int:
        """A new pending request for the notebook at ``path``; its id."""
        now = self._clock()
        with self._lock:
            self._conn.execute("DELETE FROM live_edits WHERE created_at < ? AND state NOT IN "
                               "('pending', 'delivered')", (now - KEEP_ANSWERED_S,))
            cursor = self._conn.execute(
                "INSERT INTO live_edits (path, request, state, created_at) "
                "VALUES (?, ?, 'pending', ?)", (str(path), json.dumps(request), now))
            return int(cursor.lastrowid or 0)

    def claim(self, paths: Iterable[Path]) -> list[tuple[int, Path, dict[str, Any]]]:
        """The pending requests for these open notebooks, oldest first, now delivered."""
        names = [str(path) for path in paths]
        if not names:
            return []
        marks = ", ".join("?" * len(names))
        with self._lock:
            rows = self._conn.execute(
                f"UPDATE live_edits SET state = 'delivered' WHERE state = 'pending' "
                f"AND path IN ({marks}) RETURNING id, path, request", names).fetchall()
        return sorted((int(id_), Path(path), json.loads(raw)) for id_, path, raw in rows)

    def acknowledge(self, request_id: int, state: str, reply: dict[str, Any]) -> bool:
        """JupyterLab's answer to a request it took; False when it was withdrawn meanwhile."""
        if state not in ANSWERS:
            raise ValueError(f"an answer is one of {', '.join(ANSWERS)}, not {state!r}")
        rows = self._run("UPDATE live_edits SET state = ?, reply = ? WHERE id = ? "
                         "AND state IN ('pending', 'delivered') RETURNING id",
                         (state, json.dumps(reply), request_id))
        return bool(rows)

    def answer(self, request_id: int) -> tuple[str, dict[str, Any]] | None:
        """The answer to a request, None while it waits for one."""
        rows = self._run("SELECT state, reply FROM live_edits WHERE id = ?", (request_id,))
        if not rows or rows[0][0] in ("pending", "delivered"):
            return None
        return str(rows[0][0]), json.loads(rows[0][1])

    def withdraw(self, request_id: int, *, delivered_too: bool) -> bool:
        """Withdraw an unanswered request (only a pending one unless ``delivered_too``)."""
        states = "('pending', 'delivered')" if delivered_too else "('pending')"
        rows = self._run(f"UPDATE live_edits SET state = 'withdrawn' WHERE id = ? "
                         f"AND state IN {states} RETURNING id", (request_id,))
        return bool(rows)


_stores: dict[Path, LiveEditStore] = {}
_stores_lock = threading.Lock()


def store_for(home: Path | str) -> LiveEditStore:
    """This process's store for the ledger at ``home``."""
    key = Path(home).expanduser().resolve()
    with _stores_lock:
        if key not in _stores:
            _stores[key] = LiveEditStore(key)
        return _stores[key]


def close_stores() -> None:
    with _stores_lock:
        for store in _stores.values():
            store.close()
        _stores.clear()
