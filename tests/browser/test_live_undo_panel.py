"""Undo of a task's edits of a notebook open in JupyterLab, from the panel's Undo button, in real
Chromium: the open notebook shows the undo at once, cell by cell, with no reload and no dialog;
the user's unsaved edit in another cell stays, a cell the user typed in after the task is left
and named; undoing the undo puts the task's cell back, live too (issue 21)."""

from __future__ import annotations

from typing import Any

import nbformat
from test_live_edits import CELLS, cell_texts, notebook, open_notebook, type_in_cell
from test_panel import wait_finished
from test_undo_panel import open_detail, shot_path

Lab = Any  # tests/browser/conftest.py's Lab
LEFT = "left as is: undone.ipynb cell 3 changed after the task (yours?)"


def wait_cell(page: Any, index: int, text: str) -> None:
    page.wait_for_function(
        "([sel, i, t]) => document.querySelectorAll(sel + ' .jp-InputArea-editor')[i]"
        "?.innerText === t", arg=[CELLS, index, text], timeout=15_000)


def test_undo_from_the_panel_goes_live_and_keeps_unsaved_edits(page: Any, lab: Lab) -> None:
    path = notebook(lab, "undone.ipynb", "a = 1", "b = 2", "c = 3")
    open_notebook(page, lab, "undone.ipynb", 4)
    started = lab.api("tasks", {"task": "Set a and b.", "model": "scripted/live-undone"})
    task_id = str(started["task_id"])
    assert wait_finished(lab, task_id, timeout_s=60)["task"]["status"] == "completed"
    wait_cell(page, 2, "b = 200")  # the task's edits landed live
    assert "mercury" in nbformat.read(path, as_version=4).cells[1].metadata  # its mark
    type_in_cell(page, 2, "  # mine")  # the user, in a cell the task changed
    type_in_cell(page, 3, "  # unsaved")  # and in another one, unsaved
    page.keyboard.press("Escape")
    assert page.locator(".jp-mod-dirty").count() > 0  # the notebook holds unsaved edits

    view = open_detail(page, task_id)
    view.locator(".jp-mercury-undo").click()
    result = view.locator(".jp-mercury-undo-result")
    result.wait_for(timeout=30_000)
    wait_cell(page, 1, "a = 1")  # the task's edit taken back in the open notebook
    assert cell_texts(page)[1:] == ["a = 1", "b = 200  # mine", "c = 3  # unsaved"]
    assert "1 file(s) restored: undone.ipynb" in result.inner_text()
    assert view.locator('.jp-mercury-undo-left li[data-path="undone.ipynb"]'
                        ).all_inner_texts() == [LEFT]
    assert page.locator(".jp-Dialog").count() == 0  # no reload question, no conflict
    on_disk = [cell.source for cell in nbformat.read(path, as_version=4).cells]
    assert on_disk == ["# Sales", "a = 1", "b = 200  # mine", "c = 3  # unsaved"]  # saved
    assert "mercury" not in nbformat.read(path, as_version=4).cells[1].metadata  # this build's
    page.screenshot(path=shot_path("undo-live.png"))

    undo_id = str(result.get_attribute("data-undo-id"))
    view.locator(".jp-mercury-back").click()
    again = open_detail(page, undo_id, show_panel=False)
    again.locator(".jp-mercury-undo").click()
    again.locator(".jp-mercury-undo-result").wait_for(timeout=30_000)
    wait_cell(page, 1, "a = 100")  # the undo undone: the task's cell back, live
    assert cell_texts(page)[1:] == ["a = 100", "b = 200  # mine", "c = 3  # unsaved"]
    assert again.locator(".jp-mercury-undo-left li").count() == 0
    assert nbformat.read(path, as_version=4).cells[1].metadata["mercury"]["task"] == task_id
    assert page.locator(".jp-Dialog").count() == 0
