"""runs.undo of a task's notebook edits while the notebook is open in JupyterLab (FakeLab
plays it): the undo goes cell by cell through the live route, a cell the user typed in after
the task is left and named, the undo undoes (live or on disk), without an answer the file is
swapped on disk as before, and cells after a first answer that never get theirs are named."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat import v4

from mercury_nb import runs
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.ledger.access import close_all, open_ledger
from mercury_nb.ledger.files import ledger_path
from mercury_nb.ledger.live_edits import LiveEditStore, close_stores
from mercury_nb.testing import Turn, call
from mercury_nb.testing.fake_lab import FakeLab, apply_to_file

NB = "analysis.ipynb"
OUT = v4.new_output("execute_result", data={"text/plain": "1"}, execution_count=1)
TASK = [Turn(tool_calls=(call("edit_notebook_cell", path=NB, index=1, source="x = 10"),
                         call("insert_notebook_cell", path=NB, index=0, cell_type="code",
                              source="print(x)", after_cell_id="one"),
                         call("delete_notebook_cell", path=NB, cell_id="three"))),
        Turn(text="Set x to 10, printed it and removed the z cell.")]


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "ws"
    folder.mkdir()
    notebook = v4.new_notebook()
    one = v4.new_code_cell("x = 1", execution_count=1, outputs=[OUT])
    notebook.cells = [v4.new_markdown_cell("# Sales"), one, v4.new_code_cell("y = 2"),
                      v4.new_code_cell("z = 3")]
    for cell, cell_id in zip(notebook.cells, ("head", "one", "two", "three"), strict=True):
        cell.id = cell_id
    nbformat.write(notebook, folder / NB)
    yield folder
    close_stores()
    close_all()


def cells(folder: Path) -> list[tuple[str, str]]:
    return [(c.get("id"), c.source) for c in nbformat.read(folder / NB, as_version=4).cells]


def config(folder: Path, home: Path, **settings: Any) -> MercuryConfig:
    return MercuryConfig(**{"workdir": folder, "home": home, "mode": "chat",
                            "live_edit_wait_s": 5.0, "permissions": "auto", **settings})


async def run_task(folder: Path, home: Path, scripted_model: Any) -> str:
    run = runs.submit(runs.RunRequest(task="Set x to 10 in analysis.ipynb, print it, drop z.",
                                      config=config(folder, home),
                                      model=scripted_model(TASK)))
    assert not isinstance(run, runs.Refusal), run
    outcome = await run.outcome()
    assert outcome.status == "completed", outcome.banner
    return outcome.task_id


def user_types(folder: Path, cell_id: str, source: str) -> None:
    """The user edits a cell in the open notebook (FakeLab's document is the file)."""
    notebook = nbformat.read(folder / NB, as_version=4)
    [cell] = [c for c in notebook.cells if c.get("id") == cell_id]
    cell.source = source
    nbformat.write(notebook, folder / NB)


def tasks(home: Path) -> int:
    return len(open_ledger(home).ledger.list_tasks())


@pytest.mark.parametrize("again", ["live", "disk"])
async def test_an_open_notebooks_undo_goes_cell_by_cell_and_leaves_the_users_cell(
        workspace: Path, home: Path, scripted_model: Any, again: str) -> None:
    lab = FakeLab(home, [workspace / NB])
    try:
        task_id = await run_task(workspace, home, scripted_model)
        assert [r["op"] for r in lab.requests] == ["edit", "insert", "delete"]  # it went live
        [inserted] = [i for i, _ in cells(workspace) if i not in ("head", "one", "two")]
        user_types(workspace, inserted, "print(x * 2)")  # the user, in the task's cell
        user_types(workspace, "two", "y = 20")  # and in a cell the task never touched
        lab.requests.clear()
        report = runs.undo(task_id, config(workspace, home))
        assert isinstance(report, runs.UndoReport) and report.undo_id is not None
        assert [r["op"] for r in lab.requests] == ["edit", "delete", "insert", "outputs"]
        assert {r["task"] for r in lab.requests} == {report.undo_id}  # the panel's no-reload
    finally:
        if again == "disk":
            lab.close()
    assert report.restored == [NB]
    assert report.left == [(NB, f"left as is: {NB} cell 3 changed after the task (yours?)")]
    assert cells(workspace) == [("head", "# Sales"), ("one", "x = 1"),
                                (inserted, "print(x * 2)"), ("two", "y = 20"),
                                ("three", "z = 3")]
    one = nbformat.read(workspace / NB, as_version=4).cells[1]
    assert (one.execution_count, one.outputs) == (1, [OUT])  # its outputs are back
    assert "mercury" not in one.metadata  # the task's mark went with its edit

    again_report = runs.undo(report.undo_id, config(workspace, home))
    if again == "live":
        lab.close()
    assert isinstance(again_report, runs.UndoReport)
    assert (again_report.restored, again_report.left) == ([NB], [])
    assert cells(workspace) == [("head", "# Sales"), ("one", "x = 10"),
                                (inserted, "print(x * 2)"), ("two", "y = 20")]


async def test_without_lab_the_file_is_swapped_on_disk(workspace: Path, home: Path,
                                                        scripted_model: Any) -> None:
    before = (workspace / NB).read_bytes()
    task_id = await run_task(workspace, home, scripted_model)
    assert cells(workspace)[1] == ("one", "x = 10")
    report = runs.undo(task_id, config(workspace, home))
    assert isinstance(report, runs.UndoReport) and report.restored == [NB]
    assert (workspace / NB).read_bytes() == before


async def test_open_but_no_answer_falls_back_to_the_disk(workspace: Path, home: Path,
                                                          scripted_model: Any) -> None:
    before = (workspace / NB).read_bytes()
    task_id = await run_task(workspace, home, scripted_model)
    silent = LiveEditStore(home)  # reports the notebook open, never takes a request
    silent.report_open([(workspace / NB).resolve()])
    try:
        report = runs.undo(task_id, config(workspace, home, live_edit_wait_s=0.05))
    finally:
        silent.close()
    assert isinstance(report, runs.UndoReport) and report.restored == [NB]
    assert (workspace / NB).read_bytes() == before
    with sqlite3.connect(ledger_path(home)) as db:  # it was offered first, then withdrawn
        offered = db.execute("SELECT state, request FROM live_edits").fetchall()
    assert [(state, json.loads(request)["op"]) for state, request in offered] == [
        ("withdrawn", "edit")]


async def test_an_undo_that_changes_nothing_is_not_recorded(workspace: Path, home: Path,
                                                            scripted_model: Any) -> None:
    task_id = await run_task(workspace, home, scripted_model)
    first = runs.undo(task_id, config(workspace, home))
    assert isinstance(first, runs.UndoReport) and first.undo_id is not None
    count = tasks(home)
    second = runs.undo(task_id, config(workspace, home))  # everything is back already
    assert isinstance(second, runs.UndoReport)
    assert (second.undo_id, second.restored, second.left) == (None, [], [])
    assert "to put them back" not in second.text()
    assert tasks(home) == count


async def test_a_lab_that_stops_answering_leaves_the_rest_named(
        workspace: Path, home: Path, scripted_model: Any) -> None:
    task_id = await run_task(workspace, home, scripted_model)
    path = (workspace / NB).resolve()
    lab = LiveEditStore(home)  # answers the first request only, then takes and drops them
    lab.report_open([path])
    stop = threading.Event()

    def serve() -> None:
        answered = 0
        while not stop.wait(0.005):
            for request_id, at, request in lab.claim([path]):
                if not answered:
                    lab.acknowledge(request_id, *apply_to_file(at, request))
                answered += 1

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        report = runs.undo(task_id, config(workspace, home, live_edit_wait_s=0.3))
    finally:
        stop.set()
        thread.join(timeout=5)
        lab.close()
    assert isinstance(report, runs.UndoReport) and report.restored == [NB]
    silent = "left as is: analysis.ipynb cell {n}: JupyterLab did not answer"
    assert [why for _, why in report.left] == [silent.format(n=n) for n in (3, 4, 2)]
    assert [source for _, source in cells(workspace)] == ["# Sales", "x = 1", "print(x)",
                                                          "y = 2"]


@pytest.mark.parametrize("open_at_undo", [True, False])
async def test_the_users_unsaved_work_a_live_edit_saved_stays_theirs(
        workspace: Path, home: Path, scripted_model: Any, open_at_undo: bool) -> None:
    """The user typed in the open notebook and did not save; the task's live edits saved the
    document, their typing with it: the change summary names only the task's cells, and undo
    (cell by cell, or the file swapped on disk) gives the user's typing back, not the file
    as it was before the task."""
    lab = FakeLab(home, [workspace / NB])

    def typing(notebook: Any) -> None:
        notebook.cells[2].source = "y = 2  # mine, not saved"
        mine = v4.new_markdown_cell("my note, not saved")
        mine.id = "mine"
        notebook.cells.insert(1, mine)

    lab.type_unsaved(workspace / NB, typing)
    try:
        run = runs.submit(runs.RunRequest(task="Set x to 10 in analysis.ipynb, print it, "
                                          "drop z.", config=config(workspace, home),
                                          model=scripted_model(TASK)))
        assert not isinstance(run, runs.Refusal), run
        outcome = await run.outcome()
        assert outcome.status == "completed", outcome.banner
        [change] = outcome.changes
        assert change.notebook is not None
        assert [(c.kind, c.number) for c in change.notebook.cells] == [
            ("modified", 3), ("added", 4), ("removed", 5)]  # x=10, print(x), z dropped
        changed = [line for line in change.diff.splitlines()
                   if line[:1] in "+-" and line[:3] not in ("+++", "---")]
        assert changed and not [line for line in changed if "mine" in line]
        if not open_at_undo:
            lab.close()
        report = runs.undo(outcome.task_id, config(workspace, home))
        assert [r["op"] for r in lab.requests][3:] == (["edit", "delete", "insert", "outputs"]
                                                       if open_at_undo else [])
    finally:
        if open_at_undo:
            lab.close()
    assert isinstance(report, runs.UndoReport)
    assert (report.restored, report.left) == ([NB], [])
    assert cells(workspace) == [("head", "# Sales"), ("mine", "my note, not saved"),
                                ("one", "x = 1"), ("two", "y = 2  # mine, not saved"),
                                ("three", "z = 3")]
