"""A notebook saved after its tasks ended reads correctly when reopened: in a real JupyterLab
(Debian's chromium), a background and a ``--wait`` task end, the notebook is saved, and a fresh
page (a new kernel: no widget model left) shows each static verdict and no "Error displaying
widget". The reopened notebook is photographed to ``docs/static-verdict.png``."""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from widget_fixtures import WidgetLab, widget_lab

pytestmark = [pytest.mark.slow, pytest.mark.kernel]
__all__ = ["widget_lab"]

DOCS = Path(__file__).resolve().parents[2] / "docs"
SHOTS = Path(tempfile.gettempdir()) / "mercury-widget-shots"
TIMEOUT_S = 90.0
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
NAME = "reopened.ipynb"

SETUP = '''\
import tempfile
from pathlib import Path
from mercury_nb.testing import Turn, call, register_scripted_model

GREET = 'def greet(name):\\n    return f"Hello, {name}!"\\n'
TEST = ('from greet import greet\\n\\n\\ndef test_greet():\\n'
        '    assert greet("Ada") == "Hello, Ada!"\\n')
for name in ("build", "build-wait"):
    register_scripted_model(name, [
        Turn(tool_calls=(call("create_file", path="greet.py", content=GREET),
                         call("create_file", path="test_greet.py", content=TEST))),
        Turn(tool_calls=(call("run_command", command="python -m pytest -q"),)),
        Turn(text="greet() is in **greet.py** and its test passes."),
    ])
def fresh():
    return Path(tempfile.mkdtemp(prefix="mercury-reopen-"))
print("ready")
'''
CELLS = [
    "%load_ext mercury_nb",
    SETUP,
    "%%mercury --model scripted/build --workdir {fresh()}\n"
    "Write greet(name) in greet.py with a test, and make the test pass.",
    "%%mercury --wait --model scripted/build-wait --workdir {fresh()}\n"
    "Write greet(name) in greet.py with a test, and make the test pass.",
]
BACKGROUND, WAIT = 2, 3


def until(what: str, ok: Callable[[], Any]) -> Any:
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        found = ok()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"never saw {what}")
        time.sleep(0.2)


def open_notebook(widget_lab: WidgetLab, browser: Any, height: int = 900) -> tuple[Any, Any]:
    context = browser.new_context(viewport={"width": 1100, "height": height})
    page = context.new_page()
    page.goto(widget_lab.notebook_url(NAME))
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
    page.wait_for_function(
        "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " return w && w.sessionContext && w.sessionContext.session"
        " && w.sessionContext.session.kernel"
        " && w.sessionContext.session.kernel.status === 'idle'; }",
        timeout=90_000,
    )
    return context, page


def output_text(page: Any, index: int) -> str:
    area = page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".jp-Cell-outputArea")
    return str(area.inner_text()) if area.count() else ""


def run_cell(page: Any, index: int) -> None:
    page.evaluate(
        """async (index) => {
            const panel = window.jupyterapp.shell.currentWidget;
            panel.content.activeCellIndex = index;
            await window.jupyterapp.commands.execute('notebook:run-cell');
        }""",
        index,
    )


def saved_outputs(path: Path, index: int) -> list[dict[str, Any]]:
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError):
        return []
    outputs: list[dict[str, Any]] = cells[index]["outputs"]
    return outputs


def has_verdict(outputs: list[dict[str, Any]]) -> bool:
    return any("✓ Task complete" in "".join(o.get("data", {}).get("text/html", ""))
               and "✓ Task complete" in "".join(o.get("data", {}).get("text/plain", ""))
               for o in outputs)


def test_a_reopened_notebook_shows_the_static_verdict(widget_lab: WidgetLab,
                                                      browser: Any) -> None:
    path = widget_lab.write_notebook(NAME, CELLS)
    context, page = open_notebook(widget_lab, browser)
    try:
        run_cell(page, 0)
        run_cell(page, 1)
        until("the setup", lambda: "ready" in output_text(page, 1))
        run_cell(page, BACKGROUND)
        until("the background task's end", lambda: "✓ Task complete" in output_text(page, 2))
        run_cell(page, WAIT)
        until("the --wait task's end", lambda: "✓ Task complete" in output_text(page, 3))
        page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
        until("the saved verdicts", lambda: has_verdict(saved_outputs(path, BACKGROUND))
              and has_verdict(saved_outputs(path, WAIT)))
        page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
    finally:
        context.close()

    for index in (BACKGROUND, WAIT):
        outputs = saved_outputs(path, index)
        assert all(WIDGET_VIEW not in o.get("data", {}) for o in outputs), outputs
        assert all({"text/html", "text/plain"} <= set(o.get("data", {})) for o in outputs)
    (background,) = saved_outputs(path, BACKGROUND)  # the widget's display, replaced
    assert "".join(background["data"]["text/plain"]).startswith("mercury · completed · ")

    # a new page and kernel: no widget model; tall enough to photograph both verdicts
    context, page = open_notebook(widget_lab, browser, height=1400)
    try:
        shown = {i: until(f"cell {i}'s saved output", lambda i=i: output_text(page, i))
                 for i in (BACKGROUND, WAIT)}
        for text in shown.values():
            assert "✓ Task complete" in text and "completed · " in text
            assert "✓ Verified: python -m pytest -q ✓" in text
            assert "Error displaying widget" not in text and "model not found" not in text
        assert "live status" not in page.locator(".jp-Notebook").inner_text()
        folder = DOCS if os.environ.get("MERCURY_UPDATE_SCREENSHOTS") == "1" else SHOTS
        folder.mkdir(parents=True, exist_ok=True)
        page.locator(".jp-Notebook").screenshot(path=str(folder / "static-verdict.png"))
    finally:
        context.close()
