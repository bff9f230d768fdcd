"""One model of a shown task: the server's detail and ``show`` read the same TaskDetail."""

from __future__ import annotations

from pathlib import Path

from mercury_nb import runs
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.ledger.records import TaskHeader


def a_task_with_progress(home: Path, workdir: Path) -> runs.TaskDetail:
    handle = runs.ledger_for(MercuryConfig(workdir=workdir, home=home), lambda line: None)
    assert handle is not None
    header = TaskHeader("feed00000001", "Build it", str(workdir), ("m",))
    handle.ledger.start_task(header)
    handle.ledger.add_events(header, [("step-started", None, '{"step": 1, "max_steps": 9}'),
                                      ("notice", "switching", '{"text": "switching"}')])
    handle.ledger.start_task(TaskHeader("feed00000001.1", "Help", str(workdir), ("m",),
                                        parent="feed00000001"))
    shown = runs.show_task(handle, "feed00000001")
    assert isinstance(shown, runs.TaskDetail)
    return shown


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
