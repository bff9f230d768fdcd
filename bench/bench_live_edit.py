"""Benchmark: from a notebook tool's edit (insert, edit, delete) to the notebook open in
JupyterLab showing it, through the live path (target: under 300 ms).

Run with ``python bench/bench_live_edit.py [--runs N]`` (needs Debian's chromium and Python
Playwright, as the browser tests). Not part of the test suite (tests/browser checks that the
edit lands; this measures how fast). It starts a ``jupyter lab`` the way tests/browser does,
opens a notebook in headless Chromium, and waits until the page has reported it open. It
then inserts N cells, edits each, and deletes each, calling ``insert_notebook_cell``,
``edit_notebook_cell`` and ``delete_notebook_cell`` in this process, as a task's tool calls
would (the request goes through the ledger, the server hands it to the page's held poll,
the page applies it to the open document, saves it, answers). A MutationObserver in the page
stamps the wall-clock time the notebook's DOM shows the change (one more cell, the new
source in the cell's editor, one cell fewer); the latency is that stamp minus the time the
tool was called. The tool's whole call (until the page's answer, after
its save) is printed beside it.

``--dirty`` changes the first cell in the open document (unsaved) before every edit, as a
user typing there: the page then answers with the document as it was before the edit, and
the tool reads the file first to tell the user's cells (``contract/unsaved_cells.py``).
``--pad N`` puts N code cells with a 2 KB output each in the notebook first, to see what
that costs with a larger notebook.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

TARGET_MS = 300.0
ROOT = Path(__file__).resolve().parents[1]
CELLS = ".jp-Notebook .jp-Cell"
PREDICATES = """() => {
  const cells = () => document.querySelectorAll('.jp-Notebook .jp-Cell');
  window.__shows = {
    count: n => cells().length === n,
    text: ([index, text]) => {
      const cell = cells()[index];
      return cell !== undefined && cell.querySelector('.cm-content') !== null &&
        cell.querySelector('.cm-content').textContent.includes(text);
    }
  };
}"""
WATCH = """([kind, arg]) => { window.__watch?.disconnect(); window.__shown = null;
  const shows = () => window.__shows[kind](arg);
  window.__watch = new MutationObserver(() => {
    if (window.__shown === null && shows()) { window.__shown = Date.now(); } });
  window.__watch.observe(document.body, {childList: true, subtree: true, characterData: true});
  return shows(); }"""


TYPE = """text => {
  const panel = window.jupyterapp.shell.currentWidget;
  panel.context.model.sharedModel.cells[0].setSource(text);
}"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--dirty", action="store_true")
    parser.add_argument("--pad", type=int, default=0)
    options = parser.parse_args()
    runs, dirty, pad = options.runs, options.dirty, options.pad
    sys.path.insert(0, str(ROOT / "tests" / "browser"))
    import nbformat
    from conftest import CHROMIUM, CHROMIUM_ARGS, running_lab  # the browser tests' lab
    from nbformat import v4
    from playwright.sync_api import sync_playwright

    from mercury_nb.contract.config import MercuryConfig
    from mercury_nb.ledger.live_edits import LiveEditStore
    from mercury_nb.tools.base import ToolContext
    from mercury_nb.tools.notebook_edits import (
        DeleteCellArgs,
        EditCellArgs,
        InsertCellArgs,
        delete_notebook_cell,
        edit_notebook_cell,
        insert_notebook_cell,
    )
    from mercury_nb.workspace.confinement import Workspace

    with tempfile.TemporaryDirectory() as folder, running_lab(Path(folder)) as lab:
        made = v4.new_notebook()
        output = v4.new_output("stream", name="stdout", text="0123456789abcdef\n" * 120)
        made.cells = [v4.new_markdown_cell("# Bench")] + [
            v4.new_code_cell(f"pad = {n}", outputs=[output]) for n in range(pad)]
        nbformat.write(made, lab.root / "bench.ipynb")
        store = LiveEditStore(lab.home)
        told: list[Any] = []
        ctx = ToolContext(root=Workspace(lab.root),
                          config=MercuryConfig(workdir=lab.root, home=lab.home),
                          live_edits=store, on_user_cells=told.append)
        shown: dict[str, list[float]] = {"insert": [], "edit": [], "delete": []}
        calls: dict[str, list[float]] = {"insert": [], "edit": [], "delete": []}

        def timed(op: str, page: Any, watch: tuple[str, Any], edit: Any) -> None:
            """Call ``edit`` (a tool call); stamp when the page shows ``watch``."""
            if page.evaluate(WATCH, list(watch)):
                raise SystemExit(f"{op}: the page shows {watch} before the edit")
            if dirty:  # the user's unsaved typing in the first cell
                page.evaluate(TYPE, f"# Bench {len(told)}")
            start = time.time()
            result = edit()
            calls[op].append((time.time() - start) * 1000)
            if "open in JupyterLab" not in result.content:
                raise SystemExit(f"{op} did not go live: {result.content}")
            page.wait_for_function("() => window.__shown !== null")
            shown[op].append(float(page.evaluate("() => window.__shown")) - start * 1000)

        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page: Any = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(f"{lab.base_url}lab/tree/bench.ipynb?reset&token={lab.token}")
            page.wait_for_function(f"() => document.querySelectorAll('{CELLS}').length === "
                                   f"{pad + 1}", timeout=60_000)
            page.evaluate(PREDICATES)
            while store.seen_at((lab.root / "bench.ipynb").resolve()) is None:
                page.wait_for_timeout(50)
            for run in range(runs):
                insert = InsertCellArgs(path="bench.ipynb", index=pad + run + 1,
                                        cell_type="code", source=f"x = {run}")
                timed("insert", page, ("count", pad + run + 2),
                      partial(insert_notebook_cell, insert, ctx))
            for run in range(runs):
                edit = EditCellArgs(path="bench.ipynb", index=pad + run + 1,
                                    source=f"y = {run}")
                timed("edit", page, ("text", (pad + run + 1, f"y = {run}")),
                      partial(edit_notebook_cell, edit, ctx))
            ids = [cell.id for cell in
                   nbformat.read(lab.root / "bench.ipynb", 4).cells[pad + 1:]]
            for run, cell_id in enumerate(ids):
                delete = DeleteCellArgs(path="bench.ipynb", cell_id=cell_id)
                timed("delete", page, ("count", pad + runs - run),
                      partial(delete_notebook_cell, delete, ctx))
            browser.close()
        store.close()
    if dirty and len(told) != 3 * runs:
        raise SystemExit(f"the user's cells were told {len(told)} times, not {3 * runs}")
    for op in ("insert", "edit", "delete"):
        seen, took = shown[op], calls[op]
        print(f"{op} to visible: median {statistics.median(seen):.0f} ms, min {min(seen):.0f}, "
              f"max {max(seen):.0f} over {len(seen)} runs (target < {TARGET_MS:.0f} ms); "
              f"tool call until the page's answer (after its save): median "
              f"{statistics.median(took):.0f} ms, max {max(took):.0f}")


if __name__ == "__main__":
    main()
