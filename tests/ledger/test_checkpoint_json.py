"""A step's checkpoint serializes and writes only what is new in the conversation and the
tool log; the ledger reads the whole checkpoint back from its rows."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from mercury_nb.ledger.checkpoint_json import CheckpointJson
from mercury_nb.ledger.records import StepCheckpoint, TaskHeader
from mercury_nb.ledger.store import Ledger

SECRET = "sk-checkpoint-json-secret-0042"
HEADER = TaskHeader(id="t1", task="read the files", workspace="/ws", models=("m",))


def checkpoint(messages: list[dict[str, Any]], log: list[dict[str, Any]],
               steps: int) -> dict[str, Any]:
    return {"version": 1, "task": f"use {SECRET}", "steps_total": steps,
            "messages": messages, "tool_log": log}


def grow(messages: list[dict[str, Any]], log: list[dict[str, Any]], step: int) -> None:
    messages += [{"role": "assistant", "content": f"step {step} {SECRET}"},
                 {"role": "tool", "content": f"file {step}"}]
    log.append({"seq": step, "summary": f"read f{step}.txt"})


def redacted(data: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(data).replace(SECRET, "***"))


@pytest.fixture
def ledger(tmp_path: Path) -> Ledger:
    return Ledger(tmp_path / "ledger.sqlite3")


def test_each_step_serializes_and_writes_only_its_new_items(ledger: Ledger) -> None:
    writer = CheckpointJson((SECRET,))
    ledger.start_task(HEADER)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "read the files"}]
    log: list[dict[str, Any]] = []
    serialized, rows_written = [], []
    for step in range(1, 61):
        grow(messages, log, step)
        data = checkpoint(list(messages), list(log), step)
        before = writer.serialized
        rows = writer.rows(data)
        serialized.append(writer.serialized - before)
        rows_written.append(sum(len(part.bodies) for part in rows.parts))
        ledger.add_events(HEADER, [], StepCheckpoint(rows, None, step))
        writer.wrote(rows)
        assert SECRET not in rows.head and rows.head.isascii()
        assert ledger.checkpoint("t1") == redacted(data)
    # two messages and one tool-log entry, however long the task (the first step: the task too)
    assert serialized == [4] + [3] * 59 and rows_written == serialized


def test_a_compaction_rewrites_from_the_first_replaced_message(ledger: Ledger) -> None:
    writer = CheckpointJson((SECRET,))
    ledger.start_task(HEADER)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "read the files"}]
    log: list[dict[str, Any]] = []
    for step in range(1, 21):
        grow(messages, log, step)
        rows = writer.rows(checkpoint(list(messages), list(log), step))
        ledger.add_events(HEADER, [], StepCheckpoint(rows, None, step))
        writer.wrote(rows)
    compacted = [messages[0], {"role": "user", "content": "summary"}, *messages[-2:]]
    rows = writer.rows(checkpoint(compacted, list(log), 20))
    parts = {part.part: part for part in rows.parts}
    assert (parts["messages"].keep, len(parts["messages"].bodies)) == (1, 3)
    assert (parts["tool_log"].keep, parts["tool_log"].bodies) == (20, ())
    ledger.add_events(HEADER, [], StepCheckpoint(rows, None, 20))
    writer.wrote(rows)
    assert ledger.checkpoint("t1") == redacted(checkpoint(compacted, log, 20))


def test_a_failed_write_is_made_good_by_the_next(ledger: Ledger) -> None:
    writer = CheckpointJson((SECRET,))
    ledger.start_task(HEADER)
    messages: list[dict[str, Any]] = []
    log: list[dict[str, Any]] = []
    for step in (1, 2):
        grow(messages, log, step)
        rows = writer.rows(checkpoint(list(messages), list(log), step))
        if step == 1:
            ledger.add_events(HEADER, [], StepCheckpoint(rows, None, step))
            writer.wrote(rows)  # step 2's write fails: never taken as written
    grow(messages, log, 3)
    rows = writer.rows(checkpoint(list(messages), list(log), 3))
    assert {part.part: part.keep for part in rows.parts} == {"messages": 2, "tool_log": 1}
    ledger.add_events(HEADER, [], StepCheckpoint(rows, None, 3))
    assert ledger.checkpoint("t1") == redacted(checkpoint(messages, log, 3))


def test_bytes_written_per_step_do_not_grow_with_the_conversation(ledger: Ledger) -> None:
    """What a step hands the ledger to write (its head and new rows) stays the same size at
    step 200 as at step 10 (before, each step wrote the whole conversation again)."""
    writer = CheckpointJson((SECRET,))
    ledger.start_task(HEADER)
    messages: list[dict[str, Any]] = []
    log: list[dict[str, Any]] = []
    written = []
    for step in range(1, 201):
        grow(messages, log, step)
        rows = writer.rows(checkpoint(list(messages), list(log), step))
        written.append(len(rows.head) + sum(len(body) for part in rows.parts
                                            for body in part.bodies))
        ledger.add_events(HEADER, [], StepCheckpoint(rows, None, step))
        writer.wrote(rows)
    assert max(written[100:]) <= max(written[10:20]) + 8  # a few digits more
    assert ledger.checkpoint("t1") == redacted(checkpoint(messages, log, 200))


def test_a_checkpoint_written_whole_reads_as_it_was_and_drops_rows(ledger: Ledger) -> None:
    writer = CheckpointJson(())
    ledger.start_task(HEADER)
    rows = writer.rows(checkpoint([{"role": "user", "content": "x"}], [], 1))
    ledger.add_events(HEADER, [], StepCheckpoint(rows, None, 1))
    whole = {"version": 1, "messages": [{"role": "user", "content": "older"}], "tool_log": []}
    ledger.save_turn(HEADER, verdict="text-stop", decision="FinishWith",
                     checkpoint=json.dumps(whole), snapshot=None, steps=1)
    assert ledger.checkpoint("t1") == whole
    with sqlite3.connect(ledger.path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM checkpoint_parts").fetchone() == (0,)


def test_rows_that_do_not_make_the_counted_lists_are_no_checkpoint(ledger: Ledger) -> None:
    writer = CheckpointJson(())
    ledger.start_task(HEADER)
    rows = writer.rows(checkpoint([{"role": "user", "content": "x"},
                                   {"role": "assistant", "content": "y"}], [], 1))
    ledger.add_events(HEADER, [], StepCheckpoint(rows, None, 1))
    with sqlite3.connect(ledger.path) as conn:
        conn.execute("DELETE FROM checkpoint_parts WHERE seq = 1")
    assert ledger.checkpoint("t1") is None  # the task restarts from its text, not half of it


def test_an_older_reader_finds_no_version_it_knows_in_the_head() -> None:
    rows = CheckpointJson(()).rows(checkpoint([], [], 0))
    head = json.loads(rows.head)
    assert "version" not in head and head["stored_version"] == 1
    assert head["parts"] == {"messages": 0, "tool_log": 0}
