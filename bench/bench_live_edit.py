"""Benchmark: from a notebook tool's edit to the notebook open in JupyterLab showing it, through
the live path (target: under 300 ms).

Run with ``python bench/bench_live_edit.py [--runs N]`` (needs Debian's chromium and Python
Playwright, as the browser tests). Not part of the test suite (tests/browser checks that the
edit lands; this measures how fast). It starts a ``jupyter lab`` the way tests/browser does,
opens a notebook in headless Chromium, and waits until the page has reported it open. Each
run then calls ``insert_notebook_cell`` in this process, as a task's tool call would (the
request goes through the ledger, the server hands it to the page's held poll, the page
applies it to the open document, saves it, answers). A MutationObserver in the page stamps
the wall-clock time the new cell appears in the notebook's DOM; the latency is that stamp
minus the time the tool was called. The tool's whole call (until the page's answer, after
its save) is printed beside it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET_MS = 300.0
ROOT = Path(__file__).resolve().parents[1]
CELLS = ".jp-Notebook .jp-Cell"
WATCH = """n => { window.__watch?.disconnect(); window.__shown = null;
  window.__watch = new MutationObserver(() => {
    if (window.__shown === null && document.querySelectorAll('.jp-Notebook .jp-Cell').length >= n) {
      window.__shown = Date.now(); } });
  window.__watch.observe(document.body, {childList: true, subtree: true});
  return document.querySelectorAll('.jp-Notebook .jp-Cell').length; }"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    runs = parser.parse_args().runs
    sys.path.insert(0, str(ROOT / "tests" / "browser"))
    import nbformat
    from conftest import CHROMIUM, CHROMIUM_ARGS, running_lab  # the browser tests' lab
    from nbformat import v4
    from playwright.sync_api import sync_playwright

    from mercury_nb.contract.config import MercuryConfig
    from mercury_nb.ledger.live_edits import LiveEditStore
    from mercury_nb.tools.base import ToolContext
    from mercury_nb.tools.notebook_edits import InsertCellArgs, insert_notebook_cell
    from mercury_nb.workspace.confinement import Workspace

    with tempfile.TemporaryDirectory() as folder, running_lab(Path(folder)) as lab:
        made = v4.new_notebook()
        made.cells = [v4.new_markdown_cell("# Bench")]
        nbformat.write(made, lab.root / "bench.ipynb")
        store = LiveEditStore(lab.home)
        ctx = ToolContext(root=Workspace(lab.root),
                          config=MercuryConfig(workdir=lab.root, home=lab.home),
                          live_edits=store)
        shown: list[float] = []
        calls: list[float] = []
        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page: Any = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(f"{lab.base_url}lab/tree/bench.ipynb?reset&token={lab.token}")
            page.wait_for_function(f"() => document.querySelectorAll('{CELLS}').length === 1",
                                   timeout=60_000)
            while store.seen_at((lab.root / "bench.ipynb").resolve()) is None:
                page.wait_for_timeout(50)
            for run in range(runs):
                count = run + 2
                if page.evaluate(WATCH, count) != count - 1:
                    raise SystemExit(f"run {run}: the notebook does not show {count - 1} cells")
                args = InsertCellArgs(path="bench.ipynb", index=count - 1, cell_type="code",
                                      source=f"x = {run}")
                start = time.time()
                result = insert_notebook_cell(args, ctx)
                calls.append((time.time() - start) * 1000)
                if "open in JupyterLab" not in result.content:
                    raise SystemExit(f"run {run} did not go live: {result.content}")
                page.wait_for_function("() => window.__shown !== null")
                shown.append(float(page.evaluate("() => window.__shown")) - start * 1000)
            browser.close()
        store.close()
    print(f"edit to visible: median {statistics.median(shown):.0f} ms, min {min(shown):.0f}, "
          f"max {max(shown):.0f} over {runs} runs (target < {TARGET_MS:.0f} ms)")
    print(f"tool call until the page's answer (after its save): median "
          f"{statistics.median(calls):.0f} ms, max {max(calls):.0f}")


if __name__ == "__main__":
    main()
