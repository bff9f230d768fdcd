"""One model of a shown task: the server's detail and ``show`` read the same TaskDetail."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from mercury_nb import runs
from mercury_nb.ledger.reader import LedgerReader
from mercury_nb.runs import watching
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


async def test_watch_reads_the_ledger_off_the_callers_loop(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a_task_with_progress(home, tmp_path)
    entered, release = threading.Event(), threading.Event()
    waited_out: list[str] = []
    real_changed, real_open = LedgerReader.changed, watching.open_ledger

    def stuck(name: str, real: Any) -> Any:
        def blocking(*args: Any, **kwargs: Any) -> Any:  # a ledger stuck on a lock
            entered.set()
            if not release.wait(30):  # the test releases it unless its loop is blocked
                waited_out.append(name)
            return real(*args, **kwargs)
        return blocking

    for name, patch in (("open", lambda: monkeypatch.setattr(
            watching, "open_ledger", stuck("open", real_open))),
                        ("changed", lambda: monkeypatch.setattr(
            LedgerReader, "changed", stuck("changed", real_changed)))):
        patch()
        entered.clear()
        release.clear()
        events = watching.watch("feed00000001", home=home)
        first = asyncio.ensure_future(anext(events))
        assert await asyncio.to_thread(entered.wait, 30), name  # inside the blocked read
        release.set()  # this loop runs while the read blocks: it can release it
        event = await first
        await events.aclose()
        monkeypatch.undo()
        assert (name, event.kind, waited_out) == (name, "task-started", [])
