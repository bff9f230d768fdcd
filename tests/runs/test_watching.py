"""One model of a shown task: the server's detail and ``show`` read the same TaskDetail."""

from __future__ import annotations

from pathlib import Path

from mercury_nb import runs
from tests.runs.ledger_tasks import a_task_with_progress


def test_show_and_the_server_read_one_model(home: Path, tmp_path: Path) -> None:
    shown = a_task_with_progress(home, tmp_path)
    detail = runs.task_detail("feed00000001", home=home)
    assert type(detail) is type(shown)
    assert detail is not None
    assert (detail.record, detail.subagents) == (shown.record, shown.subagents)
    # show prints the summary; the server gets every event, typed
    assert [row.kind for row in shown.event_rows] == ["task-started", "notice"]
    assert [event.kind for event in detail.events] == ["task-started", "step-started", "notice"]
    assert [event.id for event in detail.events] == [row.id for row in detail.event_rows]
    assert detail.outcome is None  # still running
