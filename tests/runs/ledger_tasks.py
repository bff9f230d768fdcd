"""A recorded task with progress events and a sub-agent, for the tests that read it back."""

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
