"""A question asked in a ``%%mercury`` cell, seen in the panel (Chromium): the panel shows it
with where to answer it, not buttons that could only be refused; the cell's own buttons
answer it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import running_lab
from live_scripts import ASKED_COMMAND
from test_live_edits import open_notebook
from test_live_fronts import BOOK, DOCS, SCRIPTS_DIR, SHOTS, kernel_idle, notebook
from test_panel import detail, open_panel

Lab = Any  # tests/browser/conftest.py's Lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """A lab whose tasks (its kernels' too) run in the default ``edits`` mode."""
    with running_lab(tmp_path_factory.mktemp("elsewhere-lab"), permissions="edits") as started:
        yield started


def test_a_cells_question_shows_in_the_panel_with_where_to_answer_it(
        page: Any, lab: Lab) -> None:
    notebook(lab, "ask.ipynb",
             ("q0", f"import sys\nsys.path.insert(0, {str(SCRIPTS_DIR)!r})\n"
                    "import live_scripts\nlive_scripts.register_all()\n%load_ext mercury_nb"),
             ("q1", "%%mercury --model scripted/live-ask\nDoes python work here?"))
    open_notebook(page, lab, "ask.ipynb", 2)
    kernel_idle(page, "ask.ipynb", 60_000)
    page.evaluate(f"""async name => {{
        const w = ({BOOK})().find(p => p.context.path === name);
        w.content.activeCellIndex = 0;
        void window.jupyterapp.commands.execute('notebook:run-all-cells');
    }}""", "ask.ipynb")
    cell = page.locator(".jp-NotebookPanel:visible .jp-Cell").nth(1)
    allow = cell.get_by_role("button", name="Allow once")
    allow.wait_for(timeout=60_000)  # the cell asks, with its buttons
    open_panel(page)
    row = page.locator(".jp-mercury-row", has=page.locator(".jp-mercury-approval-badge"))
    row.first.click(timeout=30_000)
    view = detail(page, "running")
    box = view.locator(".jp-mercury-approval")
    box.wait_for()
    assert box.locator(".jp-mercury-approval-what").inner_text() == ASKED_COMMAND
    assert box.locator("button").count() == 0  # the panel cannot answer a cell's question
    assert (box.locator(".jp-mercury-approval-elsewhere").inner_text()
            == "Answer it in the notebook cell that runs this task.")
    shoot = DOCS if os.environ.get("MERCURY_UPDATE_SCREENSHOTS") == "1" else SHOTS
    shoot.mkdir(exist_ok=True)
    page.screenshot(path=str(shoot / "panel-approval-elsewhere.png"))
    allow.click()
    try:
        cell.locator(".jp-OutputArea-output", has_text="completed").wait_for(timeout=60_000)
    except Exception:
        print("the asking cell:", cell.inner_text())
        raise
    detail(page, "completed")
