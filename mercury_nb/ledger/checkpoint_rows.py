"""A task's latest checkpoint in SQLite: its head row and its lists' rows, written and read.

The head (``checkpoints.data``) holds everything but the conversation and the tool log, and
how many rows each of those has; ``checkpoint_parts`` holds them a row per item
(:mod:`~mercury_nb.ledger.checkpoint_json` makes the rows). A head without ``parts`` is a
checkpoint written whole (by an earlier version, or given as one JSON text): read as it is.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from mercury_nb.ledger.records import PARTS, STORED_VERSION, StepCheckpoint

_READ = (
    "SELECT 0, '', 0, data, snapshot FROM checkpoints WHERE task_id = ?1 "
    "UNION ALL SELECT 1, part, seq, body, NULL FROM checkpoint_parts WHERE task_id = ?1 "
    "ORDER BY 1, 2, 3"
)
"""The head and every row in one statement: one snapshot of the file, never a head of one
step with the rows of the next."""


def keep_checkpoint(conn: sqlite3.Connection, task_id: str, now: float,
                    step: StepCheckpoint) -> None:
    """Store ``step`` as the task's latest checkpoint (inside the caller's transaction)."""
    rows = step.data
    head = rows if isinstance(rows, str) else rows.head
    conn.execute(
        "INSERT INTO checkpoints (task_id, at, data, snapshot) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (task_id) DO UPDATE SET at = excluded.at, data = excluded.data, "
        "snapshot = COALESCE(excluded.snapshot, checkpoints.snapshot)",
        (task_id, now, head, step.snapshot),
    )
    if isinstance(rows, str):
        conn.execute("DELETE FROM checkpoint_parts WHERE task_id = ?", (task_id,))
    else:
        for part in rows.parts:
            conn.execute("DELETE FROM checkpoint_parts WHERE task_id = ? AND part = ? "
                         "AND seq >= ?", (task_id, part.part, part.keep))
            conn.executemany(
                "INSERT INTO checkpoint_parts (task_id, part, seq, body) VALUES (?, ?, ?, ?)",
                [(task_id, part.part, part.keep + n, body) for n, body in enumerate(part.bodies)])
    conn.execute("UPDATE tasks SET steps = ?, updated_at = ? WHERE id = ?",
                 (step.steps, now, task_id))


def read_checkpoint(conn: sqlite3.Connection, task_id: str) -> dict[str, Any] | None:
    """The task's latest checkpoint with its start snapshot put back; None when it has none,
    or when its rows do not make the lists its head counts (it cannot be resumed as is)."""
    found = conn.execute(_READ, (task_id,)).fetchall()
    if not found or found[0][0] != 0:
        return None
    head: dict[str, Any] = json.loads(found[0][3])
    data = head
    if "parts" in head:
        bodies: dict[str, list[str]] = {part: [] for part in PARTS}
        for _, part, seq, body, _ in found[1:]:
            listed = bodies.setdefault(part, [])
            if seq != len(listed):
                return None
            listed.append(body)
        if {part: len(bodies[part]) for part in PARTS} != head["parts"]:
            return None
        data = {key: value for key, value in head.items() if key not in ("parts", STORED_VERSION)}
        data["version"] = head.get(STORED_VERSION)
        for part in PARTS:
            data[part] = json.loads("[" + ",".join(bodies[part]) + "]")
    if found[0][4] is not None:
        data["snapshot"] = found[0][4]
    return data
