"""A continue reads its checkpoint's start snapshot once, and the task's words once: the
door checks the snapshot (a checkpoint it cannot restore starts again from the text) and
the resume uses that parsed snapshot, rather than parsing the JSON a second time."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.gate import task_reading
from mercury_nb.ledger.access import LedgerHandle, open_ledger
from mercury_nb.runs.planning import PlannedRun, plan_continue, plan_task
from mercury_nb.testing import Turn, call
from mercury_nb.workspace.snapshot import Snapshot

TASK = "Write a.txt and b.txt, then show them with cat."


def count_parses(monkeypatch: pytest.MonkeyPatch, calls: list[str]) -> None:
    """Record each parse of a stored snapshot."""
    real = Snapshot.from_json.__func__  # type: ignore[attr-defined]

    def counted(cls: type[Snapshot], raw: str) -> Snapshot:
        calls.append("snapshot")
        return real(cls, raw)  # type: ignore[no-any-return]

    monkeypatch.setattr(Snapshot, "from_json", classmethod(counted))


def count_reads(monkeypatch: pytest.MonkeyPatch, calls: list[str]) -> None:
    """Record each reading of a task's words, in every module that holds ``read_task``."""
    real = task_reading.read_task

    def counted(task: str, *args: Any, **kwargs: Any) -> Any:
        calls.append(task)
        return real(task, *args, **kwargs)

    for name, module in list(sys.modules.items()):
        if name.startswith("mercury_nb.") and getattr(module, "read_task", None) is real:
            monkeypatch.setattr(module, "read_task", counted)


async def test_a_continue_parses_the_snapshot_and_reads_the_task_once(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scripted_model,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("kept\n")
    handle: LedgerHandle = open_ledger(home)
    config = MercuryConfig(workdir=workspace, max_steps=1, max_auto_continuations=0,
                           permissions="auto")
    first = plan_task(handle, TASK, config)
    assert isinstance(first, PlannedRun)
    paused = await first.run(lambda event: None, model=scripted_model(
        [Turn(tool_calls=(call("write_file", path="a.txt", content="a\n"),))]))
    assert paused.status == "paused"

    parsed: list[str] = []
    read: list[str] = []
    count_parses(monkeypatch, parsed)
    count_reads(monkeypatch, read)
    plan = plan_continue(handle, paused.task_id, config, {"max_steps": 5})
    assert isinstance(plan, PlannedRun) and plan.checkpoint is not None
    outcome = await plan.run(lambda event: None, model=scripted_model([
        Turn(tool_calls=(call("write_file", path="b.txt", content="b\n"),)),
        Turn(tool_calls=(call("run_command", command="cat a.txt b.txt"),)),
        Turn(text="Both files exist; cat shows a and b."),
    ]))
    assert outcome.status == "completed", outcome.banner
    assert [c.path for c in outcome.changes] == ["a.txt", "b.txt"]  # measured from the start
    assert parsed == ["snapshot"]
    assert read == [TASK]
