"""Each task submitted through the door carries its own live-edit route (the ledger of its
config's home) in its tool context: two tasks of one process with different homes, submitted
before either runs, each send their notebook edit to the JupyterLab of their own ledger."""

from __future__ import annotations

import asyncio
from pathlib import Path

import nbformat
import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.ledger.live_edits import close_stores
from mercury_nb.runs.request import RunRequest
from mercury_nb.runs.runner import Refusal, runner
from mercury_nb.testing import Turn, call
from mercury_nb.testing.fake_lab import FakeLab


def workspace(folder: Path) -> Path:
    folder.mkdir()
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("x = 1")]
    nbformat.write(notebook, str(folder / "analysis.ipynb"))
    return folder / "analysis.ipynb"


@pytest.fixture(autouse=True)
def _stores() -> object:
    yield None
    close_stores()


async def test_two_tasks_with_different_homes_keep_their_own_route(
        tmp_path: Path, scripted_model) -> None:
    labs: list[FakeLab] = []
    runs = []
    try:
        for name in ("a", "b"):
            notebook = workspace(tmp_path / name)
            home = tmp_path / f"home-{name}"
            labs.append(FakeLab(home, [notebook]))
            model = scripted_model([
                Turn(tool_calls=(call("insert_notebook_cell", path="analysis.ipynb", index=1,
                                      cell_type="code", source=f"print('{name}')"),)),
                Turn(text="Added the cell."),
            ])
            config = MercuryConfig(workdir=notebook.parent, home=home, model=model.name,
                                   retry_base_s=0.0, live_edit_wait_s=5.0,
                                   max_auto_continuations=0)
            run = runner.submit(RunRequest(task="add a cell", config=config, model=model))
            assert not isinstance(run, Refusal), run
            runs.append(run)
        await asyncio.gather(*(run.task for run in runs))  # both submitted before either ran
    finally:
        for lab in labs:
            lab.close()
    for name, lab in zip(("a", "b"), labs, strict=True):
        assert [(r["op"], r["cell"]["source"]) for r in lab.requests] == [
            ("insert", f"print('{name}')")]
        stored = nbformat.read(str(tmp_path / name / "analysis.ipynb"), as_version=4)
        assert [c.source for c in stored.cells] == ["x = 1", f"print('{name}')"]
