"""The SQLite store: schema, writes and reads, claims, crash recovery, pruning, damaged files."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from mercury_nb.ledger.files import is_corruption
from mercury_nb.ledger.occupancy import NotClaimed, Occupied
from mercury_nb.ledger.owner import Owner, current_owner
from mercury_nb.ledger.records import AmbiguousTaskId, TaskHeader
from mercury_nb.ledger.schema import SCHEMA_VERSION
from mercury_nb.ledger.store import Ledger
from mercury_nb.ledger.texts import INTERRUPTED_BLOCKER


def header(task_id: str, task: str = "do it", workspace: str = "/ws") -> TaskHeader:
    return TaskHeader(id=task_id, task=task, workspace=workspace, models=("openai/a", "openai/b"))


def finish(ledger: Ledger, task_id: str, status: str) -> None:
    ledger.finish_task(header(task_id), status=status, verdict="text-stop", banner=f"{status}!",
                       blocker=None, changes="[]", evidence="[]", steps=1)


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_a_new_file_is_in_wal_mode_with_the_current_schema(ledger: Ledger) -> None:
    conn = sqlite3.connect(ledger.path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    finally:
        conn.close()
    assert {"tasks", "events", "checkpoints"} <= tables


def test_a_pause_before_any_request_keeps_the_last_turns_verdict(ledger: Ledger) -> None:
    # the governor paused before the next request: no turn ended, so no verdict replaces it
    ledger.start_task(header("t1"))
    ledger.save_turn(header("t1"), verdict="steps-exhausted", decision="next-turn",
                     checkpoint=json.dumps({"steps_total": 2}), snapshot=None, steps=2)
    ledger.save_turn(header("t1"), verdict=None, decision="finish",
                     checkpoint=json.dumps({"steps_total": 2}), snapshot=None, steps=2)

    record = ledger.get("t1")
    assert record is not None
    assert (record.verdict, record.steps) == ("steps-exhausted", 2)
    assert [e.verdict for e in ledger.events("t1") if e.kind == "turn-ended"] == [
        "steps-exhausted", None]


def test_a_task_is_recorded_from_start_to_finish(ledger: Ledger, clock) -> None:
    ledger.start_task(header("t1"))
    clock.now += 5
    ledger.save_turn(header("t1"), verdict="steps-exhausted", decision="NextTurn",
                     checkpoint=json.dumps({"steps_total": 3}), snapshot='{"root": "/ws"}', steps=3)
    clock.now += 5
    ledger.save_turn(header("t1"), verdict="text-stop", decision="FinishWith",
                     checkpoint=json.dumps({"steps_total": 4}), snapshot=None, steps=4)
    ledger.add_event(header("t1"), "provider-switch", "⚠ a: 503 — switching to b and continuing.")
    changes = json.dumps([{"path": "a.py", "added": 2, "removed": 0, "kind": "created"}])
    ledger.finish_task(header("t1"), status="completed", verdict="text-stop",
                       banner="✓ Task complete", blocker=None, changes=changes, evidence="[]",
                       steps=4)

    record = ledger.get("t1")
    assert record is not None
    assert (record.status, record.verdict, record.steps) == ("completed", "text-stop", 4)
    assert record.models == ("openai/a", "openai/b")
    assert record.changes[0]["path"] == "a.py"
    assert record.has_checkpoint
    assert (record.created_at, record.updated_at) == (1_000_000.0, 1_000_010.0)
    assert (record.owner_pid, record.owner_token) == (current_owner().pid, current_owner().token)
    kinds = [(e.kind, e.verdict, e.decision) for e in ledger.events("t1")]
    assert kinds == [
        ("task-started", None, None),
        ("turn-ended", "steps-exhausted", "NextTurn"),
        ("turn-ended", "text-stop", "FinishWith"),
        ("provider-switch", None, None),
        ("task-finished", "text-stop", "completed"),
    ]
    # the latest checkpoint, with the snapshot stored by the first one put back
    assert ledger.checkpoint("t1") == {"steps_total": 4, "snapshot": '{"root": "/ws"}'}


def test_a_write_for_an_unknown_task_recreates_its_row(ledger: Ledger) -> None:
    ledger.add_event(header("lost", task="rebuild"), "notice", "hello")
    record = ledger.get("lost")
    assert record is not None and (record.task, record.status) == ("rebuild", "running")


def test_finishing_without_a_step_count_keeps_the_last_one(ledger: Ledger) -> None:
    ledger.save_turn(header("t1"), verdict="text-stop", decision="FinishWith", checkpoint="{}",
                     snapshot=None, steps=7)
    ledger.finish_task(header("t1"), status="failed", verdict=None, banner="boom", blocker="boom",
                       changes="[]", evidence="[]", steps=None)
    record = ledger.get("t1")
    assert record is not None and (record.status, record.steps) == ("failed", 7)


def test_ids_resolve_by_unique_prefix(ledger: Ledger) -> None:
    for task_id in ("abc111", "abc222", "def333"):
        ledger.start_task(header(task_id))
    found = ledger.get("def")
    assert found is not None and found.id == "def333"
    assert ledger.get("zzz") is None
    with pytest.raises(AmbiguousTaskId, match=r"matches several tasks: abc111, abc222"):
        ledger.get("abc")
    assert ledger.get("a%") is None  # LIKE wildcards are literal


def test_lookups_by_workspace_and_text(ledger: Ledger, clock) -> None:
    ledger.start_task(header("old", task="same", workspace="/ws"))
    finish(ledger, "old", "paused")
    clock.now += 1
    ledger.start_task(header("new", task="other", workspace="/ws"))
    finish(ledger, "new", "paused")
    clock.now += 1
    ledger.start_task(header("elsewhere", task="same", workspace="/other"))
    finish(ledger, "elsewhere", "paused")
    latest = ledger.latest_paused("/ws")
    assert latest is not None and latest.id == "new"
    same = ledger.paused_with_text("same", "/ws")
    assert same is not None and same.id == "old"
    assert ledger.paused_with_text("same", "/nowhere") is None
    assert [r.id for r in ledger.list_tasks()] == ["elsewhere", "new", "old"]


def test_a_claim_succeeds_once(ledger: Ledger) -> None:
    ledger.start_task(header("t1"))
    finish(ledger, "t1", "paused")
    assert ledger.occupy(header("t1"), "execute", claim_from=("paused",)) == Occupied()
    assert ledger.occupy(header("t1"), "execute", claim_from=("paused",)) == NotClaimed()
    record = ledger.get("t1")
    assert record is not None and record.status == "running"


def test_tasks_of_dead_processes_become_paused(ledger: Ledger) -> None:
    gone = Owner(pid=dead_pid(), token="boot:1")
    ledger.start_task(header("dead"), owner=gone)
    ledger.start_task(header("alive"))  # this process
    ledger.start_task(header("done"), owner=gone)
    finish(ledger, "done", "completed")

    assert ledger.recover_interrupted() == ["dead"]
    dead = ledger.get("dead")
    assert dead is not None
    assert (dead.status, dead.blocker) == ("paused", INTERRUPTED_BLOCKER)
    assert dead.banner is not None and "continue" in dead.banner
    assert ledger.events("dead")[-1].kind == "recovery"
    alive = ledger.get("alive")
    assert alive is not None and alive.status == "running"
    assert ledger.recover_interrupted() == []


def test_a_reused_pid_with_another_start_token_counts_as_dead(ledger: Ledger) -> None:
    me = current_owner()
    if not me.token:
        pytest.skip("no /proc start tokens on this platform")
    ledger.start_task(header("t1"), owner=Owner(pid=me.pid, token=me.token + "-other"))
    assert ledger.recover_interrupted() == ["t1"]


@pytest.mark.parametrize(
    ("keep_finished", "keep_days", "kept"),
    [
        pytest.param(500, 30, {"p-old", "r-old", "f-new1", "f-new2", "f-mid"}, id="by-age"),
        pytest.param(1, 30, {"p-old", "r-old", "f-new2"}, id="by-count-and-age"),
        pytest.param(500, 1000, {"p-old", "r-old", "f-old", "f-mid", "f-new1", "f-new2"},
                     id="nothing-to-prune"),
    ],
)
def test_pruning_never_touches_paused_or_running_tasks(
    ledger: Ledger, clock, keep_finished: int, keep_days: int, kept: set[str]
) -> None:
    day = 86400.0
    for task_id, age_days, status in [
        ("p-old", 90, "paused"), ("r-old", 90, None), ("f-old", 40, "completed"),
        ("f-mid", 10, "aborted"), ("f-new1", 2, "failed"), ("f-new2", 1, "completed"),
    ]:
        clock.now = 1_000_000_000.0 - age_days * day
        ledger.start_task(header(task_id), owner=Owner(pid=1, token="x"))
        ledger.save_turn(header(task_id), verdict="text-stop", decision="FinishWith",
                         checkpoint="{}", snapshot=None, steps=1)
        if status is not None:
            finish(ledger, task_id, status)
    clock.now = 1_000_000_000.0
    removed = ledger.prune(keep_finished, keep_days)
    assert {r.id for r in ledger.list_tasks()} == kept
    assert removed == 6 - len(kept)
    for gone in {"p-old", "r-old", "f-old", "f-mid", "f-new1", "f-new2"} - kept:
        assert ledger.events(gone) == [] and ledger.checkpoint(gone) is None


def test_a_pruned_task_takes_its_sub_agents_along_unless_one_still_runs(
    ledger: Ledger, clock
) -> None:
    day = 86400.0
    clock.now = 1_000_000_000.0 - 40 * day
    for task_id, parent, status in [("old", None, "completed"), ("old.1", "old", "paused"),
                                    ("old.2", "old", None), ("keep", None, "completed"),
                                    ("keep.1", "keep", "paused")]:
        sub = TaskHeader(id=task_id, task="do it", workspace="/ws", models=("openai/a",),
                         parent=parent)
        ledger.start_task(sub, owner=Owner(pid=1, token="x"))
        if status is not None:
            ledger.finish_task(sub, status=status, verdict=None, banner=None, blocker=None,
                               changes="[]", evidence="[]", steps=1)
        clock.now += day if task_id == "old.2" else 0  # "keep" and its sub-agent are newer
    clock.now = 1_000_000_000.0
    assert ledger.prune(500, 39.5) == 2
    assert {r.id for r in ledger.list_tasks()} == {"old.2", "keep", "keep.1"}
    assert [r.id for r in ledger.children("keep")] == ["keep.1"]
    assert ledger.get("keep.1").parent == "keep"


def test_a_file_that_is_not_a_database_is_moved_aside(home: Path, clock) -> None:
    home.mkdir(parents=True)
    path = home / "ledger.sqlite3"
    path.write_bytes(b"this is not sqlite at all\n" * 100)
    ledger = Ledger(path, clock=clock)
    try:
        moved = home / "ledger.sqlite3.corrupt-19700112T134640Z"
        assert moved.read_bytes().startswith(b"this is not sqlite")
        assert len(ledger.notices) == 1 and moved.name in ledger.notices[0]
        ledger.start_task(header("fresh"))
        assert [r.id for r in ledger.list_tasks()] == ["fresh"]
        assert ledger.integrity_check() == "ok"
    finally:
        ledger.close()


def test_a_damaged_page_found_later_is_recovered(home: Path, clock) -> None:
    path = home / "ledger.sqlite3"
    first = Ledger(path, clock=clock)
    for number in range(40):
        first.start_task(header(f"t{number}", task="x" * 2000))
    first.close()  # the last connection checkpoints the WAL into the main file
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 4 * page
    data[2 * page :] = b"\xff" * (len(data) - 2 * page)  # wreck every page after the second
    path.write_bytes(bytes(data))

    second = Ledger(path, clock=clock)
    try:
        assert second.list_tasks() == []  # the damaged file went aside on first use
        assert len(second.notices) == 1
        assert list(home.glob("ledger.sqlite3.corrupt-*"))
        second.start_task(header("fresh"))
        assert second.integrity_check() == "ok"
    finally:
        second.close()


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        pytest.param(sqlite3.DatabaseError("file is not a database"), True, id="not-a-db"),
        pytest.param(sqlite3.DatabaseError("database disk image is malformed"), True,
                     id="malformed"),
        pytest.param(sqlite3.OperationalError("database is locked"), False, id="locked"),
        pytest.param(ValueError("malformed"), False, id="not-sqlite"),
    ],
)
def test_only_damage_counts_as_corruption(error: BaseException, expected: bool) -> None:
    assert is_corruption(error) is expected
