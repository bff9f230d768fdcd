"""Token usage in the ledger: the column migration 2 adds, written when a task finishes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from mercury_nb.ledger.records import TaskHeader
from mercury_nb.ledger.schema import MIGRATIONS, SCHEMA_VERSION
from mercury_nb.ledger.store import Ledger

HEADER = TaskHeader(id="t1", task="do it", workspace="/ws", models=("openai/a",))
USAGE = {"openai/a": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}}


def test_usage_is_stored_and_read_back(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    try:
        ledger.start_task(HEADER)
        ledger.finish_task(HEADER, status="completed", verdict="text-stop", banner="done",
                           blocker=None, changes="[]", evidence="[]", steps=1,
                           usage=json.dumps(USAGE))
        (record,) = ledger.list_tasks()
    finally:
        ledger.close()
    assert record.usage == USAGE
    assert record.to_json()["usage"] == USAGE


def test_a_file_from_before_usage_gains_the_column(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    conn = sqlite3.connect(path)
    for statement in MIGRATIONS[0]:
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    conn.execute("INSERT INTO tasks (id, task, workspace, status, created_at, updated_at) "
                 "VALUES ('old', 'before', '/ws', 'completed', 1, 1)")
    conn.commit()
    conn.close()
    ledger = Ledger(path)
    try:
        (record,) = ledger.list_tasks()
    finally:
        ledger.close()
    assert SCHEMA_VERSION >= 2
    assert (record.id, record.usage) == ("old", {})
