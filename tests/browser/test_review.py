"""Review in real Chromium: a notebook's change cell by cell in the task detail, the changed
cells highlighted after a silent reload, no question for a notebook dirty only by its
metadata or outputs, and Keep as the focused default when there is one to ask."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

import nbformat
from review_scripts import ADDED, EDITED, notebook_text

Lab = Any  # tests/browser/conftest.py's Lab: base_url, token, root, home, env, api()
DOCS = Path(__file__).resolve().parents[2] / "docs"
SHOTS = Path(tempfile.gettempdir()) / "mercury-review-screenshots"
CELLS = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell"


def shot_path(name: str) -> str:
    """Into docs/ with MERCURY_UPDATE_SCREENSHOTS=1 (a plain run leaves them alone)."""
    folder = DOCS if os.environ.get("MERCURY_UPDATE_SCREENSHOTS") == "1" else SHOTS
    folder.mkdir(exist_ok=True)
    return str(folder / name)


def make_notebook(lab: Lab, name: str) -> str:
    """``<root>/review-<name>/<name>.ipynb`` from review_scripts; its folder, for workdir."""
    folder = lab.root / f"review-{name}"
    folder.mkdir()
    (folder / f"{name}.ipynb").write_text(notebook_text())
    return folder.name


def start(lab: Lab, name: str, folder: str) -> str:
    return str(lab.api("tasks", {"task": f"Update {name}.ipynb.",
                                 "model": f"scripted/review-{name}",
                                 "workdir": folder})["task_id"])


def wait_finished(lab: Lab, task_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 90  # the notebook is run in a fresh kernel as evidence
    while True:
        found: dict[str, Any] = lab.api(f"tasks/{task_id}")
        if found["task"]["status"] != "running":
            return found
        assert time.monotonic() < deadline, "task still running"
        time.sleep(0.2)


def open_notebook(page: Any, lab: Lab, path: str) -> None:
    page.goto(f"{lab.base_url}lab/tree/{path}?reset&token={lab.token}")
    wait_cells(page, 3)


def wait_cells(page: Any, count: int) -> None:
    page.wait_for_function("([sel, n]) => document.querySelectorAll(sel).length === n",
                           arg=[CELLS, count])


def cell_texts(page: Any) -> list[str]:
    return list(page.locator(f"{CELLS} .jp-InputArea-editor").all_inner_texts())


def wait_reloaded(page: Any, text: str = EDITED.splitlines()[0]) -> None:
    page.wait_for_function(
        f"() => [...document.querySelectorAll({CELLS!r} + ' .jp-InputArea-editor')]"
        f".some(e => e.textContent.includes({text!r}))", timeout=90_000)


def test_the_task_detail_shows_a_notebook_change_cell_by_cell(page: Any, lab: Lab) -> None:
    folder = make_notebook(lab, "diff")
    task_id = start(lab, "diff", folder)
    assert wait_finished(lab, task_id)["task"]["status"] != "running"
    page.locator('li[data-id="mercury-panel"]').click()
    page.locator(f'.jp-mercury-row[data-task-id="{task_id}"]').click()
    view = page.locator(f'.jp-mercury-detail[data-task-id="{task_id}"]')
    change = view.locator('.jp-mercury-change[data-path="diff.ipynb"]')
    change.locator("summary").click()
    cells = change.locator(".jp-mercury-cell")
    assert cells.locator(".jp-mercury-cell-title").all_inner_texts() == [
        "Cell 2 · code · changed", "Cell 3 · code · added"]
    edited = cells.nth(0)
    assert edited.locator(".jp-mercury-diff-del").inner_text().endswith("total = 1 + 2")
    assert edited.locator(".jp-mercury-diff-add").inner_text().endswith("total = 2 + 3")
    assert cells.nth(1).locator(".jp-mercury-diff-add").inner_text().endswith(ADDED)
    text = change.inner_text()
    assert '"source"' not in text and '"cell_type"' not in text  # no raw JSON lines
    colours = edited.evaluate(
        "cell => ['.jp-mercury-diff-add', '.jp-mercury-diff-del', '.jp-mercury-diff-same']"
        ".map(s => getComputedStyle(cell.querySelector(s)).backgroundColor)")
    assert colours[0] != colours[1] and "rgba(0, 0, 0, 0)" not in colours[:2]
    assert colours[2] == "rgba(0, 0, 0, 0)"  # context lines are not coloured
    page.locator("#mercury-panel").screenshot(path=shot_path("panel-notebook-diff.png"))
    change.locator(".jp-mercury-open-file").click()  # one click opens it in Lab
    page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text="diff.ipynb").wait_for()
    wait_cells(page, 4)
    assert change.locator("summary").is_visible()  # the detail stays where it was


def test_the_detail_links_to_the_cells_the_task_wrote(page: Any, lab: Lab) -> None:
    folder = make_notebook(lab, "links")
    task_id = start(lab, "links", folder)
    assert wait_finished(lab, task_id)["task"]["status"] != "running"
    stored = nbformat.read(lab.root / folder / "links.ipynb", as_version=4)
    written = [cell.id for cell in stored.cells
               if cell.metadata.get("mercury", {}).get("task") == task_id]
    assert len(written) == 2  # cell 2 edited, cell 3 added, each with its provenance
    page.locator('li[data-id="mercury-panel"]').click()
    page.locator(f'.jp-mercury-row[data-task-id="{task_id}"]').click()
    view = page.locator(f'.jp-mercury-detail[data-task-id="{task_id}"]')
    links = view.locator(".jp-mercury-written-cell")
    links.first.wait_for()
    assert links.all_inner_texts() == [f"cell {cell_id} in links.ipynb" for cell_id in written]
    links.nth(1).click()  # opens the notebook there, the added cell active and in view
    page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text="links.ipynb").wait_for()
    wait_cells(page, 4)
    page.wait_for_function(
        f"() => [...document.querySelectorAll({CELLS!r})]"
        f".findIndex(c => c.classList.contains('jp-mod-active')) === 2")
    active = page.locator(f"{CELLS}.jp-mod-active .jp-InputArea-editor")
    assert ADDED in active.inner_text()


def test_cells_changed_by_a_task_are_highlighted_after_the_reload(page: Any, lab: Lab) -> None:
    folder = make_notebook(lab, "highlight")
    open_notebook(page, lab, f"{folder}/highlight.ipynb")
    task_id = start(lab, "highlight", folder)
    wait_reloaded(page)
    marked = page.locator(f"{CELLS}.jp-mercury-reloaded-cell")
    marked.first.wait_for()
    places = ("sel => [...document.querySelectorAll(sel)].flatMap((c, i) =>"
              " c.classList.contains('jp-mercury-reloaded-cell') ? [i] : []).join(',')")
    # cell 2 changed, cell 3 added (its view may come a moment after the reload); no other
    page.wait_for_function(f"sel => ({places})(sel) === '1,2'", arg=CELLS, timeout=5_000)
    assert page.evaluate(f"sel => ({places})(sel)", CELLS) == "1,2"
    toast = page.locator(".Toastify__toast", has_text="reloaded")
    toast.wait_for()
    assert toast.inner_text().startswith(
        f"{folder}/highlight.ipynb reloaded: cell 2 changed, cell 3 added (by task {task_id})")
    assert page.locator(".jp-Dialog").count() == 0
    news = page.locator(".Toastify__toast", has_text="Jupyter news")  # Lab's own question
    if news.count():
        news.locator("button", has_text="No").click()
    page.wait_for_function(  # the toast has slid in: all of it inside the window
        "() => { const t = document.querySelector('.Toastify__toast');"
        " const box = t?.getBoundingClientRect();"
        " return !!box && box.left >= 0 && box.right <= window.innerWidth; }")
    page.screenshot(path=shot_path("notebook-reload-highlight.png"))
    marked.first.wait_for(state="detached", timeout=20_000)  # the highlight is brief
    assert wait_finished(lab, task_id)["task"]["status"] != "running"


def test_a_notebook_dirty_only_by_metadata_and_outputs_reloads_without_asking(
        page: Any, lab: Lab) -> None:
    folder = make_notebook(lab, "metadata")
    open_notebook(page, lab, f"{folder}/metadata.ipynb")
    # what a kernel does to the open notebook: fills in language_info, and a run of cell 2
    # leaves an output and an execution count; the sources stay as they are on disk
    page.evaluate("""() => {
        const model = window.jupyterapp.shell.currentWidget.context.model;
        model.setMetadata('language_info', {name: 'python', version: '3.11.2'});
        const cell = model.cells.get(1);
        cell.outputs.add({output_type: 'stream', name: 'stdout', text: '3\\n'});
        cell.executionCount = 1;
    }""")
    page.locator(f"{CELLS} .jp-OutputArea-output", has_text="3").wait_for()
    page.locator(".lm-TabBar-tab.jp-mod-dirty", has_text="metadata.ipynb").wait_for()
    task_id = start(lab, "metadata", folder)
    wait_reloaded(page)
    assert page.locator(".jp-Dialog").count() == 0
    wait_reloaded(page, ADDED)
    page.locator(".Toastify__toast", has_text="metadata.ipynb reloaded").wait_for()
    assert page.locator(".jp-Dialog").count() == 0
    assert wait_finished(lab, task_id)["task"]["status"] != "running"


def test_a_real_edit_is_asked_about_with_keep_focused_and_the_default(page: Any,
                                                                       lab: Lab) -> None:
    folder = make_notebook(lab, "keep")
    open_notebook(page, lab, f"{folder}/keep.ipynb")
    page.locator(CELLS).nth(2).locator(".jp-InputArea-editor .cm-content").click()
    page.keyboard.press("End")
    page.keyboard.type("  # mine")
    task_id = start(lab, "keep", folder)
    dialog = page.locator(".jp-Dialog", has_text="File changed by a mercury task")
    dialog.wait_for(timeout=90_000)
    focused = page.evaluate("() => [document.activeElement.textContent,"
                            " document.activeElement.className]")
    assert focused[0] == "Keep my edits" and "jp-mercury-safe" in focused[1]
    buttons = dialog.locator(".jp-Dialog-footer button").all_inner_texts()
    assert buttons == ["Keep my edits", "Reload from disk"]
    page.screenshot(path=shot_path("notebook-keep-or-reload.png"))
    page.keyboard.press("Enter")  # the default answer
    dialog.wait_for(state="detached")
    texts = cell_texts(page)
    assert any("# mine" in text for text in texts)
    assert not any(EDITED.splitlines()[0] in text for text in texts)  # not reloaded
    assert wait_finished(lab, task_id)["task"]["status"] != "running"
