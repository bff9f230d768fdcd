"""The ledger's SQLite schema as numbered migrations, applied in one transaction at open.

``PRAGMA user_version`` holds how many migrations a file has; a newer file (from a later
mercury-nb) is left as it is. Append migrations; never edit a published one.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from typing import Any

FINISHED = ("completed", "failed", "aborted")
"""Statuses that may be pruned; ``paused`` and ``running`` never are."""

_OLDER_NAMES = {"started": "task-started", "resumed": "resume", "turn": "turn-ended",
                "finished": "task-finished", "recovered": "recovery"}


def _fields_of(kind: str, verdict: str | None, decision: str | None, text: str | None,
               raw: str | None) -> dict[str, Any]:
    """An older row's event fields, as its event's class names them."""
    loaded = _loaded(raw)
    data: dict[str, Any] = loaded if isinstance(loaded, dict) else {}
    if kind == "turn-ended":
        data.update(verdict=verdict, decision=decision)
    elif kind == "task-finished":
        data.update(status=decision, verdict=verdict, blocker=text)
    elif kind in ("task-started", "resume"):
        if text:
            data["models"] = text.split(", ")
    else:
        if "tool" in data:  # a tool event's name is its class's field name
            data["name"] = data.pop("tool")
        if text is not None:
            data.setdefault("text", text)
    return data


def _loaded(raw: str | None) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None


def _name_kinds(conn: sqlite3.Connection) -> None:
    """Migration 7: events name themselves (``contract.vocabulary.EventKind``). Rows written
    under the older names take their event's own kind, and ``data`` holds every event's
    fields, so a reader needs no per-kind reconstruction from the other columns."""
    rows = conn.execute("SELECT id, kind, verdict, decision, text, data FROM events").fetchall()
    updates = []
    for id_, stored, verdict, decision, text, raw in rows:
        kind = _OLDER_NAMES.get(stored, stored)
        data = _fields_of(kind, verdict, decision, text, raw)
        updates.append((kind, json.dumps(data) if data else None, id_))
    conn.executemany("UPDATE events SET kind = ?, data = ? WHERE id = ?", updates)


Migration = tuple["str | Callable[[sqlite3.Connection], None]", ...]
"""A migration's steps: SQL statements, or a function over the connection (same
transaction)."""

MIGRATIONS: tuple[Migration, ...] = (
    (
        """
        CREATE TABLE IF NOT EXISTS tasks (
            id TEXT PRIMARY KEY,
            task TEXT NOT NULL,
            workspace TEXT NOT NULL,
            models TEXT NOT NULL DEFAULT '[]',
            status TEXT NOT NULL
                CHECK (status IN ('running', 'completed', 'paused', 'failed', 'aborted')),
            verdict TEXT,
            banner TEXT,
            blocker TEXT,
            changes TEXT NOT NULL DEFAULT '[]',
            evidence TEXT NOT NULL DEFAULT '[]',
            steps INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            owner_pid INTEGER,
            owner_token TEXT
        )
        """,
        "CREATE INDEX IF NOT EXISTS tasks_by_status ON tasks (status, workspace, updated_at)",
        "CREATE INDEX IF NOT EXISTS tasks_by_update ON tasks (updated_at)",
        """
        CREATE TABLE IF NOT EXISTS events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            task_id TEXT NOT NULL,
            at REAL NOT NULL,
            kind TEXT NOT NULL,
            verdict TEXT,
            decision TEXT,
            text TEXT
        )
        """,
        "CREATE INDEX IF NOT EXISTS events_by_task ON events (task_id, id)",
        """
        CREATE TABLE IF NOT EXISTS checkpoints (
            task_id TEXT PRIMARY KEY,
            at REAL NOT NULL,
            data TEXT NOT NULL,
            snapshot TEXT
        )
        """,
    ),
    (
        # typed event fields (JSON) for watchers in other processes, and stop requests
        "ALTER TABLE events ADD COLUMN data TEXT",
        "ALTER TABLE tasks ADD COLUMN stop_requested_at REAL",
    ),
    (
        # token usage per model ({"model": {"prompt_tokens": …, …}}), from TaskOutcome.usage
        "ALTER TABLE tasks ADD COLUMN usage TEXT NOT NULL DEFAULT '{}'",
    ),
    (
        # the delivered answer and the per-provider ledger (redacted), so a task finished
        # in any process shows them in the panel's detail
        "ALTER TABLE tasks ADD COLUMN answer TEXT",
        "ALTER TABLE tasks ADD COLUMN providers TEXT NOT NULL DEFAULT '{}'",
    ),
    (
        # a delegate_task sub-agent's row names the task that delegated it (NULL: top level)
        "ALTER TABLE tasks ADD COLUMN parent_id TEXT",
        "CREATE INDEX IF NOT EXISTS tasks_by_parent ON tasks (parent_id)",
    ),
    (
        # whether a "continue" can succeed (TaskOutcome.resumable): 0 for an ending no resume
        # cures (a model without tool support), so no front end offers one
        "ALTER TABLE tasks ADD COLUMN resumable INTEGER NOT NULL DEFAULT 1",
    ),
    (_name_kinds,),
    (
        # the settings whose change lets a continue cure a non-resumable ending, with their
        # values then (TaskOutcome.cause, JSON); {} on rows from before
        "ALTER TABLE tasks ADD COLUMN cause TEXT NOT NULL DEFAULT '{}'",
    ),
    (
        # the memory governor's pause is one event, memory-pressure-pause (it carries the
        # numbers it paused on; rows from before have the reason and the words only)
        "UPDATE events SET kind = 'memory-pressure-pause' WHERE kind = 'memory-pressure'",
    ),
    (
        # live edits: the notebooks JupyterLab has open (the panel reports them), and the
        # notebook tools' edit requests for them with JupyterLab's answers
        """
        CREATE TABLE IF NOT EXISTS open_notebooks (
            path TEXT PRIMARY KEY,
            seen_at REAL NOT NULL
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS live_edits (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            path TEXT NOT NULL,
            request TEXT NOT NULL,
            state TEXT NOT NULL CHECK (state IN
                ('pending', 'delivered', 'applied', 'refused', 'not-open', 'withdrawn')),
            reply TEXT NOT NULL DEFAULT '{}',
            created_at REAL NOT NULL
        )
        """,
        "CREATE INDEX IF NOT EXISTS live_edits_by_state ON live_edits (state, path)",
    ),
    (
        # "Always allow": the allow rules saved for a workspace (``permissions`` lists them)
        """
        CREATE TABLE IF NOT EXISTS allow_rules (
            workspace TEXT NOT NULL,
            rule TEXT NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (workspace, rule)
        )
        """,
    ),
    (
        # a checkpoint's conversation and tool log, a row per item: a step writes its new
        # ones, not the whole conversation again (older checkpoints stay whole in ``data``)
        """
        CREATE TABLE IF NOT EXISTS checkpoint_parts (
            task_id TEXT NOT NULL,
            part TEXT NOT NULL,
            seq INTEGER NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (task_id, part, seq)
        ) WITHOUT ROWID
        """,
    ),
)

SCHEMA_VERSION = len(MIGRATIONS)


def migrate(conn: sqlite3.Connection) -> int:
    """Bring ``conn``'s file up to :data:`SCHEMA_VERSION`; returns the version found.

    ``conn`` must be in autocommit mode (``isolation_level=None``); the migrations and the
    version bump commit together, so two processes opening a new file at once are safe."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        found = int(conn.execute("PRAGMA user_version").fetchone()[0])
        for statements in MIGRATIONS[found:]:
            for statement in statements:
                if isinstance(statement, str):
                    conn.execute(statement)
                else:
                    statement(conn)
        if found < SCHEMA_VERSION:
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return found
