"""The schema's migrations: a file written under the older event names reads as the events'
own kinds and fields after migration 7."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from mercury_nb.ledger.schema import MIGRATIONS, SCHEMA_VERSION
from mercury_nb.ledger.store import Ledger
from mercury_nb.runs.events import EVENT_KINDS, RunEvent

PULSE = {"activity": "waiting for the model", "silent_s": 6, "command": None}
OLDER_ROWS: list[tuple[str, str | None, str | None, str | None, dict[str, Any] | None]] = [
    # kind, verdict, decision, text, data, as mercury-nb wrote them before migration 7
    ("started", None, None, "openai/a, openai/b", None),
    ("step-started", None, None, None, {"step": 1, "max_steps": 5, "model": "openai/a"}),
    ("tool-started", None, None, None,
     {"step": 1, "tool": "run_command", "summary": "run_command: pytest", "command": "pytest"}),
    ("tool-finished", None, None, None,
     {"step": 1, "tool": "run_command", "ok": True, "summary": "run_command: pytest"}),
    ("pulse", None, None, "Still working — waiting for the model · 6 s silent", PULSE),
    ("compaction", None, None, "⚠ [compacted] 3 results", None),
    ("turn", "steps-exhausted", "next-turn", None, None),
    ("recovered", None, None, "interrupted: the process stopped mid-task", None),
    ("resumed", None, None, "openai/b", None),
    ("stop-requested", None, None, None, None),
    ("memory-pressure", None, None, None, {"reason": "memory", "why": "over 100 MB"}),
    ("finished", "text-stop", "completed", None, None),
]
MIGRATED: list[tuple[str, dict[str, Any]]] = [
    ("task-started", {"models": ["openai/a", "openai/b"]}),
    ("step-started", {"step": 1, "max_steps": 5, "model": "openai/a"}),
    ("tool-started",
     {"step": 1, "name": "run_command", "summary": "run_command: pytest", "command": "pytest"}),
    ("tool-finished",
     {"step": 1, "name": "run_command", "ok": True, "summary": "run_command: pytest"}),
    ("pulse", {**PULSE, "text": "Still working — waiting for the model · 6 s silent"}),
    ("compaction", {"text": "⚠ [compacted] 3 results"}),
    ("turn-ended", {"verdict": "steps-exhausted", "decision": "next-turn"}),
    ("recovery", {"text": "interrupted: the process stopped mid-task"}),
    ("resume", {"models": ["openai/b"]}),
    ("stop-requested", {}),
    ("memory-pressure-pause", {"reason": "memory", "why": "over 100 MB"}),
    ("task-finished", {"status": "completed", "verdict": "text-stop", "blocker": None}),
]


def _older_file(path: Path) -> None:
    """A ledger at schema 6 holding one task and ``OLDER_ROWS``."""
    conn = sqlite3.connect(path)
    for statements in MIGRATIONS[:6]:
        for statement in statements:
            assert isinstance(statement, str)
            conn.execute(statement)
    conn.execute("PRAGMA user_version = 6")
    conn.execute("INSERT INTO tasks (id, task, workspace, models, status, created_at, "
                 "updated_at) VALUES ('old', 'before', '/ws', '[\"openai/a\"]', 'completed', 1, 1)")
    for n, (kind, verdict, decision, text, data) in enumerate(OLDER_ROWS):
        conn.execute("INSERT INTO events (task_id, at, kind, verdict, decision, text, data) "
                     "VALUES ('old', ?, ?, ?, ?, ?, ?)",
                     (float(n), kind, verdict, decision, text,
                      json.dumps(data) if data is not None else None))
    conn.commit()
    conn.close()


@pytest.fixture
def migrated(tmp_path: Path) -> list[RunEvent]:
    path = tmp_path / "ledger.sqlite3"
    _older_file(path)
    ledger = Ledger(path)
    try:
        return [RunEvent.from_record(row) for row in ledger.events("old", progress=True)]
    finally:
        ledger.close()


def test_the_migration_is_the_latest() -> None:
    # 7 renames the event kinds (the rows read above), 8 adds the tasks' cause column, 9
    # names the memory governor's pause memory-pressure-pause, 10 adds the live-edit tables,
    # 11 keeps the workspaces' allow rules ("Always allow"), 12 the checkpoints' rows (a step
    # writes its new messages and tool-log entries only; older checkpoints stay whole)
    assert SCHEMA_VERSION == len(MIGRATIONS) == 12


@pytest.mark.parametrize(("index", "expected"), list(enumerate(MIGRATED)),
                         ids=[row[0] for row in OLDER_ROWS])
def test_an_older_row_reads_as_its_event(migrated: list[RunEvent], index: int,
                                         expected: tuple[str, dict[str, Any]]) -> None:
    event = migrated[index]
    assert (event.kind, event.data) == expected
    assert event.kind in EVENT_KINDS


def test_a_migrated_file_keeps_its_summary_columns(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    _older_file(path)
    ledger = Ledger(path)
    try:
        rows = ledger.events("old")  # the summary: no step, tool or pulse events
    finally:
        ledger.close()
    with sqlite3.connect(path) as conn:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
    assert version == SCHEMA_VERSION
    assert [row.kind for row in rows] == ["task-started", "compaction", "turn-ended",
                                          "recovery", "resume", "stop-requested",
                                          "memory-pressure-pause", "task-finished"]
    turn = rows[2]
    assert (turn.verdict, turn.decision, turn.text) == ("steps-exhausted", "next-turn", None)
