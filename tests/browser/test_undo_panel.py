"""Undo in real Chromium: Revert one changed file from the task's detail, then Undo the task
(a file the user edited afterwards is left and named, the command listed as not undoable),
then Undo the undo from its own row (issue 21.2)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from test_panel import wait_finished
from undo_scripts import BEFORE, COMMAND, LEFT_NOTES, files, make_workspace

Lab = Any  # tests/browser/conftest.py's Lab: base_url, token, root, home, env, api()
DOCS = Path(__file__).resolve().parents[2] / "docs"
SHOTS = Path(tempfile.gettempdir()) / "mercury-undo-screenshots"


def shot_path(name: str) -> str:
    """Into docs/ with MERCURY_UPDATE_SCREENSHOTS=1 (a plain run leaves them alone)."""
    folder = DOCS if os.environ.get("MERCURY_UPDATE_SCREENSHOTS") == "1" else SHOTS
    folder.mkdir(exist_ok=True)
    return str(folder / name)


def open_detail(page: Any, task_id: str, *, show_panel: bool = True) -> Any:
    if show_panel:  # a second click on the side bar's tab would hide the panel
        page.locator('li[data-id="mercury-panel"]').click()
    row = page.locator(f'.jp-mercury-row[data-task-id="{task_id}"]')
    row.click()
    return page.locator(f'.jp-mercury-detail[data-task-id="{task_id}"]')


def test_revert_a_file_undo_the_task_then_undo_the_undo(page: Any, lab: Lab) -> None:
    folder = lab.root / "undo-panel"
    make_workspace(folder)
    task_id = str(lab.api("tasks", {"task": "Change the files.", "model": "scripted/undo-panel",
                                     "workdir": folder.name})["task_id"])
    wait_finished(lab, task_id, timeout_s=60)
    end = files(folder)
    assert "new.py" in end and "old.txt" not in end
    (folder / "notes.md").write_text("my own notes\n")  # the user, after the task

    view = open_detail(page, task_id)
    view.locator('.jp-mercury-change[data-path="keep.py"] .jp-mercury-revert').click()
    result = view.locator(".jp-mercury-undo-result")
    result.wait_for()
    assert "1 file(s) restored: keep.py" in result.inner_text()
    assert files(folder)["keep.py"] == BEFORE["keep.py"]

    view.locator(".jp-mercury-undo").click()
    left = view.locator('.jp-mercury-undo-left li[data-path="notes.md"]')
    left.wait_for()
    assert left.inner_text() == LEFT_NOTES
    assert view.locator(".jp-mercury-not-undoable li").all_inner_texts() == [
        f"the command it ran: {COMMAND}"]
    assert files(folder) == {**BEFORE, "notes.md": "my own notes\n"}
    undo_id = str(result.get_attribute("data-undo-id"))
    page.locator("#mercury-panel").screenshot(path=shot_path("panel-undo.png"))

    view.locator(".jp-mercury-back").click()
    again = open_detail(page, undo_id, show_panel=False)
    assert again.locator(".jp-mercury-task-text").inner_text() == f"undo {task_id}"
    again.locator(".jp-mercury-undo").click()
    again.locator(".jp-mercury-undo-result").wait_for()
    assert files(folder) == {**end, "keep.py": BEFORE["keep.py"],
                             "notes.md": "my own notes\n"}
