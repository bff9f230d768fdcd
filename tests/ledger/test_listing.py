"""The plain-text table and detail of ``%mercury tasks`` / ``show``."""

from __future__ import annotations

import pytest

from mercury_nb.ledger.listing import NO_TASKS, age, first_line, task_detail_text, tasks_table
from mercury_nb.ledger.records import EventRecord, TaskRecord


def record(**changes: object) -> TaskRecord:
    values: dict[str, object] = dict(
        id="abc123def456", task="Add a slugify function with tests", workspace="/ws",
        models=("openai/a",), status="paused", verdict="steps-exhausted",
        banner="I've paused for now — this one needs another pass.\nChanges so far:",
        blocker=None, changes=[], evidence=[], steps=75, created_at=1000.0, updated_at=1100.0,
        owner_pid=1, owner_token="t", has_checkpoint=True,
    )
    values.update(changes)
    return TaskRecord(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        pytest.param(0, "0s", id="now"),
        pytest.param(59.9, "59s", id="seconds"),
        pytest.param(60, "1m", id="minute"),
        pytest.param(7200, "2h", id="hours"),
        pytest.param(3 * 86400 + 5, "3d", id="days"),
        pytest.param(-5, "0s", id="clock-skew"),
    ],
)
def test_age(seconds: float, text: str) -> None:
    assert age(seconds) == text


def test_clip_keeps_the_first_line() -> None:
    assert first_line("first line\nsecond", 40) == "first line"
    assert first_line("x" * 50, 10) == "x" * 9 + "…"
    assert first_line(None, 10) == ""


def test_the_table_has_one_row_per_task() -> None:
    table = tasks_table([record(), record(id="ffff00001111", status="completed",
                                           task="x" * 60, banner="✓ Task complete")], now=1160.0)
    lines = table.splitlines()
    assert lines[0].split() == ["id", "status", "age", "task", "banner"]
    assert lines[1].split()[:3] == ["abc123def456", "paused", "1m"]
    assert lines[1].endswith("I've paused for now — this one needs another pass.")
    assert "x" * 39 + "…" in lines[2] and lines[2].endswith("✓ Task complete")
    assert tasks_table([], now=0) == NO_TASKS


def test_the_detail_shows_everything_known() -> None:
    detail = task_detail_text(
        record(status="completed", blocker="interrupted: the process stopped mid-task",
               changes=[{"path": "a.py", "added": 3, "removed": 1, "kind": "modified"}],
               evidence=[{"command": "pytest", "exit_code": 0, "after_last_change": True}]),
        [EventRecord(1010.0, "turn-ended", "text-stop", "finish", None),
         EventRecord(1020.0, "provider-switch", None, None, "⚠ a: 503 — switching to b")],
        now=1200.0,
    )
    assert detail.splitlines()[0] == "task abc123def456 · completed"
    for part in ("workspace: /ws", "models: openai/a", "verdict: steps-exhausted · steps: 75",
                 "checkpoint: yes — the task is complete", "blocker: interrupted",
                 "  modified a.py (+3 −1)",
                 "  ✓ pytest → exit 0", "  +10s the model replied, finishing",
                 "  +20s ⚠ a: 503 — switching to b"):
        assert part in detail, part


@pytest.mark.parametrize(
    ("status", "resumable", "line"),
    [
        ("paused", True, "checkpoint: yes — resumable"),
        ("failed", False, "checkpoint: yes — a continue cannot cure this ending"),
        ("completed", False, "checkpoint: yes — the task is complete"),
    ],
)
def test_the_checkpoint_line_follows_the_ending(status: str, resumable: bool, line: str) -> None:
    detail = task_detail_text(record(status=status, resumable=resumable), [], now=1200.0)
    assert line in detail.splitlines()


def test_the_detail_does_not_call_a_non_resumable_task_resumable() -> None:
    detail = task_detail_text(record(status="failed", resumable=False), [], now=1200.0)
    assert "checkpoint: yes — a continue cannot cure this ending" in detail.splitlines()
    assert "resumable" not in detail


def test_a_wide_table_wraps_on_word_boundaries_under_the_task_column() -> None:
    long_banner = "I've paused for now — my replies kept hitting the output-token limit again"
    rows = [record(banner=long_banner), record(id="ffff00001111", task="a " * 30)]
    flat = tasks_table(rows, now=1160.0)
    wrapped = tasks_table(rows, now=1160.0, width=60)
    lines = wrapped.splitlines()
    assert max(len(line) for line in lines) <= 60
    assert wrapped.split() == flat.split()  # every word whole, in order
    indent = flat.splitlines()[0].index("task")
    continued = [line for line in lines if line.startswith(" ")]
    assert continued and all(line[:indent].isspace() and line[indent] != " "
                             for line in continued)


def test_the_detail_names_a_sub_agents_parent_and_a_parents_sub_agents() -> None:
    subs = [record(id="abc123def456.1", parent="abc123def456", status="completed",
                   task="Write the parts files"),
            record(id="abc123def456.2", parent="abc123def456", status="aborted",
                   task="Run the slow check")]
    parent = task_detail_text(record(), [], now=1200.0, subagents=subs)
    assert parent.split("sub-agents:\n")[1].splitlines()[:2] == [
        "  abc123def456.1 · completed · Write the parts files",
        "  abc123def456.2 · aborted · Run the slow check",
    ]
    assert "sub-agent of:" not in parent
    assert "sub-agent of: abc123def456" in task_detail_text(subs[0], [], now=1200.0)


def test_the_detail_shows_read_back_evidence_as_its_own_kind() -> None:
    detail = task_detail_text(
        record(status="completed", evidence=[
            {"command": "read back NOTES.md", "exit_code": 0, "step": 1, "kind": "read-back",
             "path": "NOTES.md"},
            {"command": "read back gone.md", "exit_code": 1, "step": 1, "kind": "read-back",
             "path": "gone.md"},
            {"command": "python hello.py", "exit_code": 0, "step": 2, "kind": "command"},
        ]),
        [], now=1200.0,
    )
    assert "  ✓ read back NOTES.md" in detail.splitlines()
    assert "  ✗ read back gone.md (could not be read)" in detail.splitlines()
    assert "  ✓ python hello.py → exit 0" in detail.splitlines()
