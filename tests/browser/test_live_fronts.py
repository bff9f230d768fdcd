"""Live edits beyond the panel's insert, in real Chromium and JupyterLab: a CLI run and a
``%%mercury`` cell of another notebook (its own kernel) edit an open notebook, a live delete is
taken back by Ctrl+Z, and run_cells' outputs show in the open notebook; never a dialog."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import nbformat
from live_scripts import LIVE_SOURCE
from nbformat import v4
from test_live_edits import CELLS, cell_texts, live_polling, open_notebook, type_in_cell
from test_panel import wait_finished

Lab = Any  # tests/browser/conftest.py's Lab
SCRIPTS_DIR = Path(__file__).resolve().parents[1] / "server"
DOCS = Path(__file__).resolve().parents[2] / "docs"
SHOTS = Path(tempfile.gettempdir()) / "mercury-panel-screenshots"


def notebook(lab: Lab, name: str, *cells: tuple[str, str]) -> Path:
    """``name`` with these ``(id, source)`` cells: a markdown one for an id starting with
    ``md``, else code."""
    made = v4.new_notebook()
    made.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                   "language": "python"}
    for cell_id, source in cells:
        cell = (v4.new_markdown_cell if cell_id.startswith("md") else v4.new_code_cell)(source)
        cell.id = cell_id
        made.cells.append(cell)
    path = lab.root / name
    nbformat.write(made, path)
    return path


def sources_on_disk(path: Path) -> list[str]:
    return [cell.source for cell in nbformat.read(path, as_version=4).cells]


def no_dialog(page: Any) -> None:
    assert page.locator(".jp-Dialog").count() == 0  # no reload question, no conflict


def test_a_cli_run_edits_the_open_notebook_live(page: Any, lab: Lab) -> None:
    path = notebook(lab, "cli.ipynb", ("md-c", "# Sales"), ("c1", "x = 1"), ("c2", "y = 2"))
    open_notebook(page, lab, "cli.ipynb", 3)
    type_in_cell(page, 2, "  # mine")  # unsaved, in another cell
    env = {**lab.env, "PYTHONPATH": os.pathsep.join([str(SCRIPTS_DIR),
                                                      os.environ.get("PYTHONPATH", "")])}
    cli = subprocess.run(
        [sys.executable, str(SCRIPTS_DIR / "live_scripts.py"), "run", "Make cell 1 plot.",
         "--model", "scripted/live-cli", "--workdir", str(lab.root), "--json"],
        env=env, capture_output=True, timeout=120)
    assert cli.returncode == 0, cli.stderr.decode()[-2000:]
    assert cell_texts(page)[1:] == [LIVE_SOURCE, "y = 2  # mine"]
    assert sources_on_disk(path) == ["# Sales", LIVE_SOURCE, "y = 2  # mine"]
    no_dialog(page)


def test_a_live_delete_is_taken_back_by_ctrl_z(page: Any, lab: Lab) -> None:
    path = notebook(lab, "delete.ipynb", ("md-d", "# Sales"), ("gone", "x = 1"),
                    ("keep", "y = 2"))
    open_notebook(page, lab, "delete.ipynb", 3)
    started = lab.api("tasks", {"task": "Delete the x cell.", "model": "scripted/live-delete"})
    page.wait_for_function(f"n => document.querySelectorAll('{CELLS}').length === n", arg=2,
                           timeout=15_000)
    assert wait_finished(lab, started["task_id"], timeout_s=60)["task"]["status"] == "completed"
    assert cell_texts(page)[1:] == ["y = 2"]
    assert sources_on_disk(path) == ["# Sales", "y = 2"]
    no_dialog(page)
    page.locator(f"{CELLS}").nth(0).click()
    page.keyboard.press("Escape")  # command mode
    page.keyboard.press("Control+z")
    page.wait_for_function(f"n => document.querySelectorAll('{CELLS}').length === n", arg=3,
                           timeout=5_000)
    assert cell_texts(page)[1:] == ["x = 1", "y = 2"]


def test_run_cells_outputs_show_in_the_open_notebook(page: Any, lab: Lab) -> None:
    path = notebook(lab, "outputs.ipynb", ("md-o", "# Sales"),
                    ("o1", "months = ['Jan', 'Feb']"), ("o2", "print(len(months) * 21)"))
    open_notebook(page, lab, "outputs.ipynb", 3)
    started = lab.api("tasks", {"task": "Fill in the outputs of outputs.ipynb.",
                                "model": "scripted/live-outputs"})
    output = page.locator(f"{CELLS} .jp-OutputArea-output", has_text="42")
    output.wait_for(timeout=60_000)
    found = wait_finished(lab, started["task_id"], timeout_s=60)
    assert found["task"]["status"] == "completed", found["events"][-2:]
    prompts = page.locator(f"{CELLS} .jp-InputArea-prompt").all_inner_texts()
    assert prompts[1:] == ["[1]:", "[2]:"]
    stored = nbformat.read(path, as_version=4).cells
    assert stored[2].outputs[0]["text"] == "42\n" and stored[2].execution_count == 2
    no_dialog(page)
    shoot = DOCS if os.environ.get("MERCURY_UPDATE_SCREENSHOTS") == "1" else SHOTS
    shoot.mkdir(exist_ok=True)
    page.locator("#jp-main-dock-panel").screenshot(path=str(shoot / "live-outputs.png"))
    live_polling(page, lab, "outputs.ipynb")  # still polling: the page did not reload


BOOK = """() => {
    const found = [];
    for (const w of window.jupyterapp.shell.widgets('main')) {
        if (w.context && w.content && w.content.model) found.push(w);
    }
    return found;
}"""
"""The notebook panels open in the main area (each has its context and its model)."""


def book_sources(page: Any, name: str) -> list[str]:
    """The sources of the open notebook ``name``'s cells, from its model (the tab need not be
    the visible one)."""
    return list(page.evaluate(f"""name => {{
        const w = ({BOOK})().find(p => p.context.path === name);
        const cells = w.content.model.cells;
        const out = [];
        for (let i = 0; i < cells.length; i++) out.push(cells.get(i).sharedModel.getSource());
        return out;
    }}""", name))


def kernel_idle(page: Any, name: str, timeout_ms: int) -> None:
    page.wait_for_function(f"""name => {{
        const w = ({BOOK})().find(p => p.context.path === name);
        const kernel = w && w.sessionContext.session && w.sessionContext.session.kernel;
        return !!kernel && kernel.status === 'idle';
    }}""", arg=name, timeout=timeout_ms)


def test_a_cell_of_another_notebook_edits_the_open_notebook_live(page: Any, lab: Lab) -> None:
    path_b = notebook(lab, "kernel-b.ipynb", ("md-k", "# Sales"), ("k1", "x = 1"),
                      ("k2", "y = 2"))
    notebook(lab, "kernel-a.ipynb",
             ("a0", f"import sys\nsys.path.insert(0, {str(SCRIPTS_DIR)!r})\n"
                    "import live_scripts\nlive_scripts.register_all()\n"
                    "%load_ext mercury_nb\nprint('registered')"),
             ("a1", "%%mercury --model scripted/live-kernel --permissions auto\n"
                    "Add a cell to kernel-b.ipynb that plots sales by month."))
    open_notebook(page, lab, "kernel-b.ipynb", 3)
    type_in_cell(page, 2, "  # mine")  # unsaved, in a cell the task does not touch
    page.evaluate("async () => { await window.jupyterapp.commands.execute("
                  "'docmanager:open', {path: 'kernel-a.ipynb'}); }")
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget"
                           " && window.jupyterapp.shell.currentWidget.context"
                           " && window.jupyterapp.shell.currentWidget.context.path"
                           " === 'kernel-a.ipynb'")
    # run only once A's kernel is idle: run before A's session has a kernel, Lab asks
    # "Select Kernel" and the command waits on that dialog (awaited in page.evaluate, which
    # has no timeout, the test hung silently); not awaited, so a stall fails below
    kernel_idle(page, "kernel-a.ipynb", 60_000)
    page.evaluate("() => { void window.jupyterapp.commands.execute("
                  "'notebook:run-all-cells'); }")
    a_cells = page.locator(".jp-NotebookPanel:visible .jp-Cell")
    try:
        a_cells.nth(0).locator(".jp-OutputArea-output", has_text="registered").wait_for(
            timeout=30_000)
        page.wait_for_function(f"""name => {{
            const w = ({BOOK})().find(p => p.context.path === name);
            return w.content.model.cells.length === 4;
        }}""", arg="kernel-b.ipynb", timeout=60_000)
        a_cells.nth(1).locator(".jp-OutputArea-output",  # the verdict: it follows the
                               has_text="✓ Task complete").wait_for(timeout=60_000)  # status
    except Exception:
        print("cell outputs of kernel-a.ipynb:", a_cells.all_inner_texts())
        print("lab log:", (lab.root.parent / "lab.log").read_text(errors="replace")[-4000:])
        raise
    assert "✓ Task complete" in a_cells.nth(1).inner_text()
    assert book_sources(page, "kernel-b.ipynb") == ["# Sales", LIVE_SOURCE, "x = 1",
                                                    "y = 2  # mine"]
    # the page saved B before it answered: the unsaved edit is on disk, so the change went
    # through the open document (a disk edit would have left it out, or asked to reload)
    assert sources_on_disk(path_b) == ["# Sales", LIVE_SOURCE, "x = 1", "y = 2  # mine"]
    no_dialog(page)
    page.evaluate(f"""async name => {{
        const w = ({BOOK})().find(p => p.context.path === name);
        await w.context.save();
    }}""", "kernel-b.ipynb")
    assert sources_on_disk(path_b) == ["# Sales", LIVE_SOURCE, "x = 1", "y = 2  # mine"]
    no_dialog(page)


def test_a_cell_not_saved_yet_gets_its_new_cell_right_below_it(page: Any, lab: Lab) -> None:
    """The usual case: the user adds a ``%%mercury`` cell and runs it without saving. Its id
    is in the open document only; the task's "below this cell" insert lands right after it."""
    path = notebook(lab, "below.ipynb",
                    ("b0", f"import sys\nsys.path.insert(0, {str(SCRIPTS_DIR)!r})\n"
                           "import live_scripts\nlive_scripts.register_all()\n"
                           "%load_ext mercury_nb\nprint('registered')"),
                    ("b1", "x = 1"))
    open_notebook(page, lab, "below.ipynb", 2)
    asking = ("%%mercury --model scripted/live-below --permissions auto\n"
              "Add a cell below this one that plots sales by month.")
    page.evaluate(f"""([name, source]) => {{
        const w = ({BOOK})().find(p => p.context.path === name);
        w.content.model.sharedModel.insertCell(1, {{cell_type: 'code', id: 'asking', source}});
    }}""", ["below.ipynb", asking])
    assert "asking" not in [cell.id for cell in nbformat.read(path, as_version=4).cells]
    kernel_idle(page, "below.ipynb", 60_000)
    page.evaluate("() => { void window.jupyterapp.commands.execute("
                  "'notebook:run-all-cells'); }")
    cells = page.locator(".jp-NotebookPanel:visible .jp-Cell")
    try:
        cells.nth(1).locator(".jp-OutputArea-output", has_text="✓ Task complete").wait_for(
            timeout=90_000)  # the verdict, which shows a moment after the status line
    except Exception:
        print("cell outputs of below.ipynb:", cells.all_inner_texts())
        print("lab log:", (lab.root.parent / "lab.log").read_text(errors="replace")[-4000:])
        raise
    assert "✓ Task complete" in cells.nth(1).inner_text()
    assert book_sources(page, "below.ipynb")[1:] == [asking, LIVE_SOURCE, "x = 1"]
    assert sources_on_disk(path)[1:] == [asking, LIVE_SOURCE, "x = 1"]  # saved with it
    no_dialog(page)


def test_the_error_fix_loop_from_a_cell_of_the_notebook(page: Any, lab: Lab) -> None:
    """A ``%%mercury`` cell asks to fix its notebook: the task runs the cells (the traceback
    shows in the open notebook), fixes the failing cell, runs them again, and the asking
    cell's widget keeps its verdict (a fresh kernel only skipped that cell)."""
    from live_scripts import FIXED

    gate = lab.root.parent / "fix-gate"  # the fix waits for it: the traceback is seen first
    path = notebook(lab, "fix.ipynb",
                    ("f0", f"import sys\nsys.path.insert(0, {str(SCRIPTS_DIR)!r})\n"
                           "import live_scripts\n"
                           f"live_scripts.register_all(fix_gate={str(gate)!r})\n"
                           "%load_ext mercury_nb"),
                    ("f1", "sales = [3, 4]"), ("f2", "total = sum(sale)\nprint(total)"),
                    ("f3", "%%mercury --model scripted/live-fix --permissions auto\n"
                           "Fix the error in this notebook."))
    open_notebook(page, lab, "fix.ipynb", 4)
    kernel_idle(page, "fix.ipynb", 60_000)
    for index in (0, 3):  # the set-up cell, then the asking cell (the bug is not run)
        page.evaluate(f"""async ([name, index]) => {{
            const w = ({BOOK})().find(p => p.context.path === name);
            w.content.activeCellIndex = index;
            void window.jupyterapp.commands.execute('notebook:run-cell');
        }}""", ["fix.ipynb", index])
        kernel_idle(page, "fix.ipynb", 60_000)
    cells = page.locator(".jp-NotebookPanel:visible .jp-Cell")
    shoot = DOCS if os.environ.get("MERCURY_UPDATE_SCREENSHOTS") == "1" else SHOTS
    shoot.mkdir(exist_ok=True)
    try:  # the first run's traceback lands in the open notebook, under the failing cell
        cells.nth(2).locator(".jp-OutputArea-output", has_text="NameError").wait_for(
            timeout=120_000)
        page.locator("#jp-main-dock-panel").screenshot(path=str(shoot / "error-fix-error.png"))
        assert book_sources(page, "fix.ipynb")[2] == "total = sum(sale)\nprint(total)"
        gate.touch()
        cells.nth(3).locator(".jp-OutputArea-output", has_text="✓ Task complete").wait_for(
            timeout=120_000)  # the verdict, which shows a moment after the status line
    except Exception:
        print("cell outputs of fix.ipynb:", cells.all_inner_texts())
        print("lab log:", (lab.root.parent / "lab.log").read_text(errors="replace")[-4000:])
        raise
    verdict = cells.nth(3).inner_text()
    assert "✓ Task complete" in verdict
    assert "✓ Verified: fix.ipynb ran top to bottom in a fresh kernel" in verdict
    assert book_sources(page, "fix.ipynb")[2] == FIXED
    assert cells.nth(2).locator(".jp-OutputArea-output").inner_text().strip() == "7"
    assert [c.source for c in nbformat.read(path, as_version=4).cells][2] == FIXED
    no_dialog(page)
    page.locator("#jp-main-dock-panel").screenshot(path=str(shoot / "error-fix.png"))
