"""Live edits in real Chromium and JupyterLab: an agent's cell lands in the open notebook at
once, with no reload and no dialog, keeps the user's unsaved edits, refuses a cell the user
is typing in, and is taken back by Ctrl+Z."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

import nbformat
from live_scripts import LIVE_SOURCE
from nbformat import v4
from test_panel import wait_finished

Lab = Any  # tests/browser/conftest.py's Lab
DOCS = Path(__file__).resolve().parents[2] / "docs"
SHOTS = Path(tempfile.gettempdir()) / "mercury-panel-screenshots"
CELLS = ".jp-Notebook .jp-Cell"


def notebook(lab: Lab, name: str, *sources: str) -> Path:
    made = v4.new_notebook()
    made.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                   "language": "python"}
    made.cells = [v4.new_markdown_cell("# Sales")] + [v4.new_code_cell(s) for s in sources]
    path = lab.root / name
    nbformat.write(made, path)
    return path


def open_notebook(page: Any, lab: Lab, name: str, cells: int) -> None:
    page.goto(f"{lab.base_url}lab/tree/{name}?reset&token={lab.token}")
    page.wait_for_function(f"n => document.querySelectorAll('{CELLS}').length === n",
                           arg=cells)
    live_polling(page, lab, name)


def live_polling(page: Any, lab: Lab, name: str) -> None:
    """Wait until the page has told the server the notebook is open (its first poll)."""
    from mercury_nb.ledger.live_edits import LiveEditStore

    store = LiveEditStore(lab.home)
    try:
        deadline = time.monotonic() + 20
        while store.seen_at((lab.root / name).resolve()) is None:
            assert time.monotonic() < deadline, "the page never reported the notebook open"
            page.wait_for_timeout(50)
    finally:
        store.close()


def cell_texts(page: Any) -> list[str]:
    return list(page.locator(f"{CELLS} .jp-InputArea-editor").all_inner_texts())


def type_in_cell(page: Any, index: int, text: str) -> None:
    page.locator(f"{CELLS} .jp-InputArea-editor").nth(index).click()
    page.keyboard.press("End")
    page.keyboard.type(text)


def test_a_task_adds_a_cell_live_and_unsaved_edits_survive(page: Any, lab: Lab) -> None:
    path = notebook(lab, "unsaved.ipynb", "a = 1", "b = 2")
    open_notebook(page, lab, "unsaved.ipynb", 3)
    type_in_cell(page, 1, "  # mine")  # cell 2, unsaved
    started = lab.api("tasks", {"task": "Add a plot cell.", "model": "scripted/live-unsaved"})
    page.wait_for_function(f"n => document.querySelectorAll('{CELLS}').length === n", arg=4,
                           timeout=15_000)
    found = wait_finished(lab, started["task_id"], timeout_s=60)
    assert found["task"]["status"] == "completed"
    texts = cell_texts(page)
    assert texts[1] == "a = 1  # mine" and texts[3] == LIVE_SOURCE
    # the save wrote the user's typing too, but the task's change is its cell alone
    [change] = found["changes"]
    assert [(c["kind"], c["number"]) for c in change["notebook"]["cells"]] == [("added", 4)]
    assert page.locator(".jp-Dialog").count() == 0  # no reload question, no conflict
    # the page saved the document before it answered: the file is what the user sees
    on_disk = [cell.source for cell in nbformat.read(path, as_version=4).cells]
    assert on_disk == ["# Sales", "a = 1  # mine", "b = 2", LIVE_SOURCE]
    shoot = DOCS if os.environ.get("MERCURY_UPDATE_SCREENSHOTS") == "1" else SHOTS
    shoot.mkdir(exist_ok=True)
    page.locator("#jp-main-dock-panel").screenshot(path=str(shoot / "live-insert.png"))
    page.keyboard.press("Control+s")
    page.wait_for_function("() => !document.querySelector('.jp-mod-dirty')")
    saved = [cell.source for cell in nbformat.read(path, as_version=4).cells]
    assert saved == ["# Sales", "a = 1  # mine", "b = 2", LIVE_SOURCE]
    assert page.locator(".jp-Dialog").count() == 0


def test_an_edit_of_a_cell_the_user_is_typing_in_is_refused(page: Any, lab: Lab) -> None:
    path = notebook(lab, "typing.ipynb", "x = 1")
    open_notebook(page, lab, "typing.ipynb", 2)
    type_in_cell(page, 1, "  # typing")  # the cell the task's edit names
    started = lab.api("tasks", {"task": "Edit the heading.", "model": "scripted/live-typing"})
    found = wait_finished(lab, started["task_id"], timeout_s=60)
    edits = [event["data"] for event in found["events"] if event["kind"] == "tool-finished"
             and event["data"]["name"] == "edit_notebook_cell"]
    assert [edit["ok"] for edit in edits] == [False]  # refused, and the model was told
    assert cell_texts(page)[1] == "x = 1  # typing"  # the typing is never overwritten
    assert nbformat.read(path, as_version=4).cells[1].source == "x = 1"
    assert page.locator(".jp-Dialog").count() == 0


def test_a_task_from_the_panel_edits_the_open_notebook_live(page: Any, lab: Lab) -> None:
    notebook(lab, "panel.ipynb", "sales = [3, 4]")
    open_notebook(page, lab, "panel.ipynb", 2)
    page.locator('li[data-id="mercury-panel"]').click()
    page.locator(".jp-mercury-panel").wait_for()
    page.locator(".jp-mercury-model").select_option("scripted/live-panel")
    page.locator(".jp-mercury-prompt-text").fill("Plot sales by month.")
    page.locator(".jp-mercury-start").click()
    page.wait_for_function(f"n => document.querySelectorAll('{CELLS}').length === n", arg=3,
                           timeout=15_000)
    assert cell_texts(page)[1] == LIVE_SOURCE
    page.locator('.jp-mercury-detail[data-status="completed"]').wait_for(timeout=30_000)
    assert page.locator(".jp-Dialog").count() == 0


def test_ctrl_z_removes_the_agents_cell(page: Any, lab: Lab) -> None:
    notebook(lab, "undo.ipynb", "sales = [3, 4]")
    open_notebook(page, lab, "undo.ipynb", 2)
    started = lab.api("tasks", {"task": "Add a plot cell.", "model": "scripted/live-undo"})
    page.wait_for_function(f"n => document.querySelectorAll('{CELLS}').length === n", arg=3,
                           timeout=15_000)
    assert wait_finished(lab, started["task_id"], timeout_s=60)["task"]["status"] == "completed"
    page.locator(f"{CELLS}").nth(0).click()
    page.keyboard.press("Escape")  # command mode
    page.keyboard.press("Control+z")
    page.wait_for_function(f"n => document.querySelectorAll('{CELLS}').length === n", arg=2,
                           timeout=5_000)
    assert LIVE_SOURCE not in cell_texts(page)


def test_ctrl_z_takes_back_the_agents_edit_of_a_cell(page: Any, lab: Lab) -> None:
    notebook(lab, "undo-edit.ipynb", "sales = [3, 4]")
    open_notebook(page, lab, "undo-edit.ipynb", 2)
    started = lab.api("tasks", {"task": "Make cell 1 plot.", "model": "scripted/live-undo-edit"})
    page.wait_for_function("s => document.querySelectorAll('.jp-Notebook .jp-Cell "
                           ".jp-InputArea-editor')[1].innerText === s", arg=LIVE_SOURCE,
                           timeout=15_000)
    assert wait_finished(lab, started["task_id"], timeout_s=60)["task"]["status"] == "completed"
    page.locator(f"{CELLS}").nth(0).click()
    page.keyboard.press("Escape")  # command mode
    page.keyboard.press("Control+z")
    page.wait_for_function("() => document.querySelectorAll('.jp-Notebook .jp-Cell "
                           ".jp-InputArea-editor')[1].innerText === 'sales = [3, 4]'",
                           timeout=5_000)
    assert page.locator(".jp-Dialog").count() == 0


def test_a_notebook_without_cell_ids_is_edited_live(page: Any, lab: Lab) -> None:
    """nbformat 4.4 has no cell ids (and JupyterLab saves it so): the edit finds its cell by
    place in the open document, with the user's unsaved typing elsewhere kept."""
    import json

    path = lab.root / "no-ids.ipynb"
    path.write_text(json.dumps({
        "nbformat": 4, "nbformat_minor": 4,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                    "language": "python"}},
        "cells": [{"cell_type": "code", "metadata": {}, "outputs": [],
                   "execution_count": None, "source": source}
                  for source in ("title = 'Sales'", "sales = [3, 4]")]}))
    open_notebook(page, lab, "no-ids.ipynb", 2)
    type_in_cell(page, 0, "  # mine")  # cell 1, unsaved
    started = lab.api("tasks", {"task": "Make cell 1 plot.", "model": "scripted/live-no-ids"})
    found = wait_finished(lab, started["task_id"], timeout_s=60)
    assert found["task"]["status"] == "completed"
    assert cell_texts(page)[1] == LIVE_SOURCE
    assert page.locator(".jp-Dialog").count() == 0
    saved = json.loads(path.read_text())
    assert saved["nbformat_minor"] == 4
    assert [c["source"] if isinstance(c["source"], str) else "".join(c["source"])
            for c in saved["cells"]] == ["title = 'Sales'  # mine", LIVE_SOURCE]
