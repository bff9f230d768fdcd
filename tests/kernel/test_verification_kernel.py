"""A ``%%mercury`` task edits a notebook that has ``%%mercury`` cells of its own, in a real
kernel run headless by nbclient: the re-run that verifies it starts no agent (the ledger holds
the one task that ran), no stderr of the verification kernel reaches the cell, and the saved
notebook holds the verdict as static HTML and text, no widget view left without a fallback."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from mercury_nb.contract.verification_run import SKIPPED_IN_VERIFICATION
from mercury_nb.ledger.store import Ledger

pytestmark = pytest.mark.kernel

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

INNER = [  # the notebook the task changes: each agent cell would start a task, or fail
    "%load_ext mercury_nb",
    "from mercury_nb.testing import Turn, register_scripted_model\n"
    "register_scripted_model('nested', [Turn(text='A nested agent ran.')] * 3)",
    "%%mercury --wait --model scripted/nested\nSay hello.",
    "%%mercury --model scripted/nested\nSay hello in the background.",
    "%mercury continue",
    "%mercury stop 0123456789ab",  # an unknown task: a UsageError, were it run
    "import os\nassert os.environ['MERCURY_VERIFICATION_RUN'] == '1'",
]

SETUP = '''
from mercury_nb.testing import Turn, call, register_scripted_model

register_scripted_model("scripted/edits", [
    Turn(tool_calls=(call("insert_notebook_cell", path="inner.ipynb", index=LEN,
                          cell_type="code", source="print('greeting')"),)),
    Turn(text="Added a greeting cell to inner.ipynb."),
])
'''

OUTER = [
    "%load_ext mercury_nb",
    SETUP.replace("LEN", str(len(INNER))),
    "%%mercury --wait --allow tool:run_cells --model scripted/edits\n"
    "Add a cell printing a greeting to inner.ipynb.",
]
TASK_CELL = 2


def write_notebook(path: Path, sources: list[str]) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, str(path))


def recorded_tasks(home: Path) -> list[Any]:
    ledger = Ledger(home / "ledger.sqlite3")
    try:
        return ledger.list_tasks()
    finally:
        ledger.close()


@dataclass(frozen=True)
class Ran:
    outer: Path
    saved: nbformat.NotebookNode
    home: Path


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Ran:
    """The outer notebook run once by nbclient and saved, with its own work ledger."""
    workdir = tmp_path_factory.mktemp("verified")
    home = tmp_path_factory.mktemp("home")
    write_notebook(workdir / "inner.ipynb", INNER)
    outer = workdir / "outer.ipynb"
    write_notebook(outer, OUTER)
    nb = nbformat.read(str(outer), as_version=4)
    # without PYTEST_CURRENT_TEST the kernel forwards what reaches its stderr descriptor into
    # the cell, as in Lab: a child process inheriting that descriptor would show there
    env = {k: v for k, v in os.environ.items()
           if k not in ("MERCURY_PLAIN", "MERCURY_VERIFICATION_RUN", "PYTEST_CURRENT_TEST")}
    env["MERCURY_HOME"] = str(home)
    client = NotebookClient(nb, timeout=180, kernel_name="python3",
                            resources={"metadata": {"path": str(workdir)}})
    client.execute(env=env)
    nbformat.write(nb, str(outer))
    return Ran(outer, nbformat.read(str(outer), as_version=4), home)


def texts(outputs: list[Any], mime: str = "text/plain") -> str:
    return "\n".join(o.get("text", "") or o.get("data", {}).get(mime, "") for o in outputs)


def test_verifying_the_changed_notebook_starts_no_agent(ran: Ran) -> None:
    nb = ran.saved
    shown = texts(nb.cells[TASK_CELL].outputs)
    assert "✓ Task complete" in shown, shown
    assert "inner.ipynb" in shown
    inner = nbformat.read(str(ran.outer.parent / "inner.ipynb"), as_version=4)
    assert inner.cells[-1].source == "print('greeting')"  # the task did change it
    tasks = recorded_tasks(ran.home)
    assert [t.task for t in tasks] == ["Add a cell printing a greeting to inner.ipynb."]
    assert SKIPPED_IN_VERIFICATION not in shown  # the check's own output stays in its kernel


def test_no_stderr_of_the_verification_kernel_reaches_the_cell(ran: Ran) -> None:
    nb = ran.saved
    outputs = [o for cell in nb.cells for o in cell.outputs]
    assert [o for o in outputs if o.output_type == "stream" and o.name == "stderr"] == []
    everything = texts(outputs) + texts(outputs, "text/html")
    assert "IPKernelApp" not in everything and "WARNING" not in everything


def test_the_saved_notebook_holds_the_static_verdict_and_no_bare_widget(ran: Ran) -> None:
    outputs = ran.saved.cells[TASK_CELL].outputs
    assert all(WIDGET_VIEW not in o.get("data", {}) for o in outputs), outputs
    assert [o.output_type for o in outputs] == ["display_data", "display_data"], outputs
    status, verdict = outputs  # where the widget was, its last status line; then the verdict
    for output in outputs:
        assert {"text/html", "text/plain"} <= set(output.data), output
    assert status.data["text/plain"].startswith("mercury · completed · ")
    assert "completed · " in status.data["text/html"]
    assert verdict.data["text/plain"].startswith("│ Added a greeting cell to inner.ipynb.")
    assert "✓ Task complete" in verdict.data["text/plain"]
    assert "mercury-banner" in verdict.data["text/html"]
    assert "✓ Task complete" in verdict.data["text/html"]
