"""A cell whose MERCURY_HOME names another ledger than its JupyterLab's still edits the
notebooks open in that Lab live: the server extension hands its ledger to the kernels it
starts (MERCURY_LAB_HOME), and the notebook tools and undo route through it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat import v4

from mercury_nb import runs
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.home import LAB_HOME_ENV
from mercury_nb.ledger.access import close_all
from mercury_nb.ledger.live_edits import close_stores
from mercury_nb.testing import Turn, call
from mercury_nb.testing.fake_lab import FakeLab

NB = "analysis.ipynb"
TASK = [Turn(tool_calls=(call("edit_notebook_cell", path=NB, index=0, source="x = 10"),)),
        Turn(text="Set x to 10.")]


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "ws"
    folder.mkdir()
    notebook = v4.new_notebook()
    notebook.cells = [v4.new_code_cell("x = 1")]
    notebook.cells[0].id = "one"
    nbformat.write(notebook, folder / NB)
    yield folder
    close_stores()
    close_all()


async def edit_and_undo(folder: Path, home: Path, scripted_model: Any) -> None:
    config = MercuryConfig(workdir=folder, home=home, mode="chat", live_edit_wait_s=5.0,
                           allow=("tool:run_cells",))  # its check runs the cells unasked
    run = runs.submit(runs.RunRequest(task="Set x to 10 in analysis.ipynb.", config=config,
                                      model=scripted_model(TASK)))
    assert not isinstance(run, runs.Refusal), run
    outcome = await run.outcome()
    assert outcome.status == "completed", outcome.banner
    report = runs.undo(outcome.task_id, config)
    assert isinstance(report, runs.UndoReport) and report.restored == [NB], report


@pytest.mark.parametrize("lab_home_set", [True, False])
async def test_a_task_with_its_own_home_edits_the_labs_open_notebook_live(
        workspace: Path, tmp_path: Path, scripted_model: Any,
        monkeypatch: pytest.MonkeyPatch, lab_home_set: bool) -> None:
    lab_home, task_home = tmp_path / "lab-home", tmp_path / "task-home"
    if lab_home_set:
        monkeypatch.setenv(LAB_HOME_ENV, str(lab_home))
    else:
        monkeypatch.delenv(LAB_HOME_ENV, raising=False)
    lab = FakeLab(lab_home, [workspace / NB])
    try:
        await edit_and_undo(workspace, task_home, scripted_model)
    finally:
        lab.close()
    ops = [request["op"] for request in lab.requests]
    # with the Lab's ledger handed down, the edit and its undo went to the open document;
    # without it, both went to the file on disk behind it (what the Lab never saw)
    assert ops == (["edit", "edit"] if lab_home_set else [])
    assert nbformat.read(workspace / NB, as_version=4).cells[0].source == "x = 1"

