"""runs.undo: a sub-agent's changes and commands are part of its parent's undo; a running
task is refused; a per-file revert touches only that file; all from the ledger and disk."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mercury_nb import runs
from mercury_nb.agent.approval_events import PermissionAnswered
from mercury_nb.agent.events import ToolStarted
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.ledger.access import close_all, open_ledger
from mercury_nb.ledger.records import TaskHeader
from mercury_nb.workspace.undo_store import KeptFile, TaskStates, put_blob, save_states


@pytest.fixture
def config(tmp_path: Path) -> Iterator[MercuryConfig]:
    yield MercuryConfig(home=tmp_path / "home", workdir=tmp_path / "ws")
    close_all()


def _finished(config: MercuryConfig, task_id: str, parent: str | None = None) -> TaskHeader:
    header = TaskHeader(task_id, "t", str(config.workdir), ("m",), parent=parent)
    ledger = open_ledger(config.home).ledger
    ledger.start_task(header)
    ledger.finish_task(header, status="completed", verdict=None, banner=None, blocker=None,
                       changes='[{"path": "x", "added": 1, "removed": 0}]', evidence="[]",
                       steps=1)
    return header


def _changed(config: MercuryConfig, task_id: str, name: str) -> None:
    """``name`` went from "before" to "after" in task ``task_id``'s record."""
    root = Path(config.workdir)
    root.mkdir(exist_ok=True)
    (root / name).write_text("after\n")
    before, end = put_blob(config.home, b"before\n"), put_blob(config.home, b"after\n")
    files = {name: KeptFile(before, end)}
    save_states(config.home, task_id, TaskStates(str(root), files))


def test_a_subagents_changes_commands_and_kernel_runs_are_in_its_parents_undo(
        config: MercuryConfig) -> None:
    _finished(config, "parent000001")
    child = _finished(config, "child0000001", parent="parent000001")
    open_ledger(config.home).ledger.add_event(
        child, ToolStarted.kind, data={"step": 1, "name": "run_command", "summary": "s",
                                       "command": "pip install rich"})
    open_ledger(config.home).ledger.add_event(
        child, ToolStarted.kind, data={"step": 2, "name": "run_in_kernel", "summary": "x = 1"})
    _changed(config, "parent000001", "mine.txt")
    _changed(config, "child0000001", "theirs.txt")
    report = runs.undo("parent000001", config)
    assert isinstance(report, runs.UndoReport)
    assert sorted(report.restored) == ["mine.txt", "theirs.txt"]
    assert report.not_undoable == ["the command it ran: pip install rich",
                                   "state changed in the kernel (1 run of code there)"]
    assert (Path(config.workdir) / "theirs.txt").read_text() == "before\n"


def test_cells_run_in_the_kernel_count_and_a_denied_call_is_not_listed_as_run(
        config: MercuryConfig) -> None:
    header = _finished(config, "task00000009")
    ledger = open_ledger(config.home).ledger
    started = {"step": 1, "summary": "s"}
    ledger.add_event(header, ToolStarted.kind,
                     data={**started, "name": "run_command", "command": "curl evil"})
    ledger.add_event(header, PermissionAnswered.kind,
                     data={"step": 1, "tool": "run_command", "what": 'run "curl evil"',
                           "answer": "deny", "why": "the user said no"})
    ledger.add_event(header, ToolStarted.kind,
                     data={**started, "name": "run_command", "command": "pip install rich"})
    ledger.add_event(header, PermissionAnswered.kind,
                     data={"step": 1, "tool": "run_command", "what": 'run "pip install rich"',
                           "answer": "allow-once"})
    ledger.add_event(header, ToolStarted.kind, data={**started, "name": "run_cells_in_kernel"})
    ledger.add_event(header, ToolStarted.kind, data={**started, "name": "run_in_kernel"})
    ledger.add_event(header, PermissionAnswered.kind,
                     data={"step": 1, "tool": "run_in_kernel", "what": "run_in_kernel",
                           "answer": "deny", "why": "no way to ask"})
    _changed(config, "task00000009", "a.txt")
    report = runs.undo("task00000009", config)
    assert isinstance(report, runs.UndoReport)
    assert report.not_undoable == ["the command it ran: pip install rich",
                                   "state changed in the kernel (1 run of code there)"]


def test_a_running_task_is_refused(config: MercuryConfig) -> None:
    open_ledger(config.home).ledger.start_task(TaskHeader("running00001", "t", "/w", ("m",)))
    refusal = runs.undo("running00001", config)
    assert isinstance(refusal, runs.Refusal)
    assert refusal.message == "task running00001 is still running: stop it before undoing it"


def test_a_task_without_a_record_is_refused_by_name(config: MercuryConfig) -> None:
    _finished(config, "old000000001")
    refusal = runs.undo("old000000001", config)
    assert isinstance(refusal, runs.Refusal) and "kept no record for undo" in refusal.message


def test_a_per_file_revert_touches_that_file_only(config: MercuryConfig) -> None:
    _finished(config, "task00000001")
    _changed(config, "task00000001", "a.txt")
    root = Path(config.workdir)
    (root / "b.txt").write_text("after\n")
    save_states(config.home, "task00000001", TaskStates(str(root), {
        "a.txt": KeptFile(put_blob(config.home, b"before\n"), put_blob(config.home, b"after\n")),
        "b.txt": KeptFile(None, put_blob(config.home, b"after\n"))}))
    report = runs.undo("task00000001", config, paths=("b.txt",))
    assert isinstance(report, runs.UndoReport) and report.restored == ["b.txt"]
    assert (root / "a.txt").read_text() == "after\n" and not (root / "b.txt").exists()


def test_undo_waits_for_a_task_running_in_the_same_workspace(config: MercuryConfig) -> None:
    _finished(config, "done00000001")
    _changed(config, "done00000001", "a.txt")
    open_ledger(config.home).ledger.start_task(
        TaskHeader("busy00000001", "t", str(config.workdir), ("m",)))
    refusal = runs.undo("done00000001", config)
    assert isinstance(refusal, runs.Refusal) and refusal.kind == "workspace-busy"
    assert refusal.message.startswith("task busy00000001 is running in ")
    assert (Path(config.workdir) / "a.txt").read_text() == "after\n"
