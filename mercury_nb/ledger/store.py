"""The work ledger: one SQLite file in WAL mode holding tasks, their events and checkpoints.

Every write is one ``BEGIN IMMEDIATE`` transaction (with a busy timeout), so several
processes can record at once. A file SQLite reports as damaged is moved aside with a
timestamp and a fresh ledger takes its place; :attr:`Ledger.notices` says so. Callers pass
text that is already redacted (see :mod:`mercury_nb.ledger.recorder`).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from mercury_nb.ledger.allow_rules import LedgerRules
from mercury_nb.ledger.checkpoint_rows import keep_checkpoint
from mercury_nb.ledger.files import connect, is_corruption, move_aside
from mercury_nb.ledger.occupancy import LedgerOccupancy
from mercury_nb.ledger.owner import Owner, current_owner, is_alive
from mercury_nb.ledger.records import (
    RECOVERED,
    RESUMED,
    STOP_REQUESTED,
    CheckpointRows,
    RecordedKind,
    StepCheckpoint,
    TaskHeader,
)
from mercury_nb.ledger.schema import FINISHED
from mercury_nb.ledger.store_reads import LedgerReads
from mercury_nb.ledger.texts import CORRUPT_NOTICE, INTERRUPTED_BANNER, INTERRUPTED_BLOCKER

_T = TypeVar("_T")


class Ledger(LedgerReads, LedgerOccupancy, LedgerRules):
    """The ledger file, shared by the threads of one process (calls are serialized)."""

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self.notices: list[str] = []
        """Messages for the user (a damaged file was moved aside), oldest first."""
        self.clock = clock
        self._lock = threading.RLock()
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._conn = connect(path)
        except sqlite3.DatabaseError as error:
            if not is_corruption(error):
                raise
            self._conn = self._replace_damaged()

    # --- plumbing -------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _replace_damaged(self) -> sqlite3.Connection:
        moved = move_aside(self.path, self.clock())
        self.notices.append(CORRUPT_NOTICE.format(path=self.path, moved=moved.name))
        return connect(self.path)

    def _guarded(self, action: Callable[[sqlite3.Connection], _T]) -> _T:
        with self._lock:
            try:
                return action(self._conn)
            except sqlite3.DatabaseError as error:
                if not is_corruption(error):
                    raise
                self._conn.close()
                self._conn = self._replace_damaged()
                return action(self._conn)

    def _write(self, action: Callable[[sqlite3.Connection], _T]) -> _T:
        def transaction(conn: sqlite3.Connection) -> _T:
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = action(conn)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            return result

        return self._guarded(transaction)

    @staticmethod
    def _ensure(conn: sqlite3.Connection, header: TaskHeader, owner: Owner, now: float) -> None:
        conn.execute(
            "INSERT OR IGNORE INTO tasks (id, task, workspace, models, status, created_at, "
            "updated_at, owner_pid, owner_token, parent_id) "
            "VALUES (?, ?, ?, ?, 'running', ?, ?, ?, ?, ?)",
            (header.id, header.task, header.workspace, json.dumps(list(header.models)),
             now, now, owner.pid, owner.token, header.parent),
        )

    @staticmethod
    def _event(conn: sqlite3.Connection, task_id: str, now: float, kind: RecordedKind,
               verdict: str | None = None, decision: str | None = None,
               text: str | None = None, data: dict[str, Any] | str | None = None) -> None:
        """One event row; ``data`` is its fields (a dict, or already JSON)."""
        if isinstance(data, dict):
            data = json.dumps(data)
        conn.execute(
            "INSERT INTO events (task_id, at, kind, verdict, decision, text, data) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (task_id, now, kind, verdict, decision, text, data),
        )

    # --- writes ---------------------------------------------------------------------

    def start_task(self, header: TaskHeader, *, resumed: bool = False,
                   owner: Owner | None = None) -> None:
        """The task is running in ``owner`` (default: this process)."""
        from mercury_nb.agent.events import TaskStarted  # here: the store imports light

        who = owner or current_owner()
        kind = RESUMED if resumed else TaskStarted.kind
        now = self.clock()

        def write(conn: sqlite3.Connection) -> None:
            self._ensure(conn, header, who, now)
            conn.execute(
                "UPDATE tasks SET status = 'running', banner = NULL, blocker = NULL, "
                "stop_requested_at = NULL, resumable = 1, "
                "updated_at = ?, owner_pid = ?, owner_token = ? WHERE id = ?",
                (now, who.pid, who.token, header.id),
            )
            self._event(conn, header.id, now, kind, text=", ".join(header.models),
                        data={"models": list(header.models)})

        self._write(write)

    def add_event(self, header: TaskHeader, kind: RecordedKind, text: str | None = None,
                  data: str | None = None) -> None:
        """One event; ``data`` is its typed fields as a JSON object."""
        self.add_events(header, [(kind, text, data)])

    def add_events(self, header: TaskHeader,
                   events: Sequence[tuple[RecordedKind, str | None, str | None]],
                   step: StepCheckpoint | None = None) -> None:
        """Several ``(kind, text, data)`` events in one transaction (a batch of progress),
        with the newest finished step's checkpoint when given."""
        now = self.clock()

        def write(conn: sqlite3.Connection) -> None:
            self._ensure(conn, header, current_owner(), now)
            for kind, text, data in events:
                self._event(conn, header.id, now, kind, text=text, data=data)
            if step is not None:
                keep_checkpoint(conn, header.id, now, step)
            conn.execute("UPDATE tasks SET updated_at = ? WHERE id = ?", (now, header.id))

        self._write(write)

    def request_stop(self, task_id: str) -> bool:
        """Ask the process running ``task_id`` to stop it; False when it is not running."""
        now = self.clock()

        def write(conn: sqlite3.Connection) -> bool:
            cursor = conn.execute(
                "UPDATE tasks SET stop_requested_at = ?, updated_at = ? "
                "WHERE id = ? AND status = 'running'",
                (now, now, task_id),
            )
            if cursor.rowcount != 1:
                return False
            self._event(conn, task_id, now, STOP_REQUESTED)
            return True

        return self._write(write)

    def save_turn(self, header: TaskHeader, *, verdict: str | None, decision: str,
                  checkpoint: str | CheckpointRows, snapshot: str | None, steps: int) -> None:
        """A turn ended: its event, the task's latest checkpoint (JSON without the start
        snapshot; ``snapshot`` is stored when given and kept otherwise) and step count.
        ``verdict`` None (paused before a request): the task keeps its last turn's verdict."""
        from mercury_nb.agent.events import TurnEnded

        now = self.clock()

        def write(conn: sqlite3.Connection) -> None:
            self._ensure(conn, header, current_owner(), now)
            self._event(conn, header.id, now, TurnEnded.kind, verdict, decision,
                        data={"verdict": verdict, "decision": decision})
            keep_checkpoint(conn, header.id, now, StepCheckpoint(checkpoint, snapshot, steps))
            conn.execute("UPDATE tasks SET verdict = COALESCE(?, verdict) WHERE id = ?",
                         (verdict, header.id))

        self._write(write)

    def finish_task(self, header: TaskHeader, *, status: str, verdict: str | None,
                    banner: str | None, blocker: str | None, changes: str, evidence: str,
                    steps: int | None, usage: str = "{}", answer: str | None = None,
                    providers: str = "{}", resumable: bool = True,
                    cause: str = "{}") -> None:
        """The task ended with ``status``; ``changes`` and ``evidence`` are JSON lists,
        ``usage`` (tokens per model) and ``providers`` (provider -> first error) JSON
        objects; ``steps`` None keeps the count of the last checkpoint; ``resumable``
        False: no plain "continue" can cure this ending, only one that changes the settings
        ``cause`` (a JSON object: setting -> its value then) names."""
        from mercury_nb.agent.events import TaskFinished, TextDelta

        now = self.clock()

        def write(conn: sqlite3.Connection) -> None:
            self._ensure(conn, header, current_owner(), now)
            conn.execute(
                "UPDATE tasks SET status = ?, verdict = ?, banner = ?, blocker = ?, changes = ?, "
                "evidence = ?, steps = COALESCE(?, steps), usage = ?, answer = ?, providers = ?, "
                "resumable = ?, cause = ?, updated_at = ? WHERE id = ?",
                (status, verdict, banner, blocker, changes, evidence, steps, usage, answer,
                 providers, int(resumable), cause, now, header.id),
            )
            self._event(conn, header.id, now, TaskFinished.kind, verdict, status, blocker,
                        data={"status": status, "verdict": verdict, "blocker": blocker})
            # the live text of its steps served watchers while it ran; the answer replaces it
            conn.execute("DELETE FROM events WHERE task_id = ? AND kind = ?",
                         (header.id, TextDelta.kind))

        self._write(write)

    def recover_interrupted(
        self, alive: Callable[[int | None, str | None], bool] = is_alive
    ) -> list[str]:
        """Tasks left ``running`` by a process that no longer runs become ``paused`` with the
        "interrupted" blocker; returns their ids."""
        rows = self._guarded(
            lambda conn: conn.execute(
                "SELECT id, owner_pid, owner_token FROM tasks WHERE status = 'running'"
            ).fetchall()
        )
        dead = [(id_, pid, token) for id_, pid, token in rows if not alive(pid, token)]
        if not dead:
            return []
        now = self.clock()

        def write(conn: sqlite3.Connection) -> list[str]:
            recovered = []
            for id_, pid, token in dead:
                cursor = conn.execute(
                    "UPDATE tasks SET status = 'paused', blocker = ?, banner = ?, updated_at = ? "
                    "WHERE id = ? AND status = 'running' AND owner_pid IS ? AND owner_token IS ?",
                    (INTERRUPTED_BLOCKER, INTERRUPTED_BANNER, now, id_, pid, token),
                )
                if cursor.rowcount == 1:
                    self._event(conn, id_, now, RECOVERED, text=INTERRUPTED_BLOCKER,
                                data={"text": INTERRUPTED_BLOCKER})
                    recovered.append(id_)
            return recovered

        return self._write(write)

    def prune(self, keep_finished: int, keep_days: float) -> int:
        """Drop finished tasks beyond the newest ``keep_finished`` or older than ``keep_days``
        (paused and running tasks are never pruned), and with each its sub-agents that are
        not running (a paused sub-agent goes with its parent); returns how many went."""
        cutoff = self.clock() - keep_days * 86400.0
        finished = ", ".join(f"'{status}'" for status in FINISHED)
        doomed = (
            f"SELECT id FROM tasks WHERE status IN ({finished}) AND (updated_at < ? OR id IN "
            f"(SELECT id FROM tasks WHERE status IN ({finished}) "
            "ORDER BY updated_at DESC, id LIMIT -1 OFFSET ?))"
        )

        def write(conn: sqlite3.Connection) -> int:
            ids = [row[0] for row in conn.execute(doomed, (cutoff, keep_finished))]
            ids += [row[0] for id_ in list(ids) for row in conn.execute(
                "SELECT id FROM tasks WHERE parent_id = ? AND status != 'running'", (id_,))
                if row[0] not in ids]
            for id_ in ids:
                conn.execute("DELETE FROM events WHERE task_id = ?", (id_,))
                conn.execute("DELETE FROM checkpoints WHERE task_id = ?", (id_,))
                conn.execute("DELETE FROM checkpoint_parts WHERE task_id = ?", (id_,))
                conn.execute("DELETE FROM tasks WHERE id = ?", (id_,))
            return len(ids)

        return self._write(write)
