"""A task edits a notebook open in JupyterLab while the user's own changes there are not saved:
a refused edit is retried on the source the refusal showed, and "below this cell" finds the
``%%mercury`` cell that asked although the file does not hold it yet."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.live_edit import source_sha
from mercury_nb.ledger.live_edits import close_stores
from mercury_nb.runs import Refusal, RunRequest, submit
from mercury_nb.testing import Turn, call
from mercury_nb.testing.fake_lab import FakeLab


@pytest.fixture(autouse=True)
def _stores() -> object:
    yield None
    close_stores()


def analysis(folder: Path) -> Path:
    folder.mkdir()
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("import pandas as pd"),
                      nbformat.v4.new_code_cell("x = 1")]
    notebook.cells[0].id, notebook.cells[1].id = "load", "code1"
    nbformat.write(notebook, str(folder / "analysis.ipynb"))
    return folder / "analysis.ipynb"


async def run(path: Path, home: Path, scripted_model: Any, lab: FakeLab,
              turns: list[Turn]) -> None:
    config = MercuryConfig(workdir=path.parent, home=home, mode="chat", retry_base_s=0.0,
                           live_edit_wait_s=5.0)
    try:
        run = submit(RunRequest(task="work on analysis.ipynb", config=config,
                                model=scripted_model(turns)))
        assert not isinstance(run, Refusal), run
        await run.outcome()
    finally:
        lab.close()


async def test_a_refused_edit_is_retried_on_what_the_refusal_showed(
        tmp_path: Path, scripted_model: Any) -> None:
    path = analysis(tmp_path / "ws")
    lab = FakeLab(tmp_path / "home", [path])

    def typing(notebook: Any) -> None:
        notebook.cells[1].source = "x = 1  # mine"
        notebook.cells[0].source = "import pandas as pd  # also mine"

    lab.type_unsaved(path, typing)
    edit = call("edit_notebook_cell", path="analysis.ipynb", index=1, source="x = 2  # mine")
    await run(path, tmp_path / "home", scripted_model, lab, [
        Turn(tool_calls=(call("read_notebook", path="analysis.ipynb"),)),
        Turn(tool_calls=(edit,)), Turn(tool_calls=(edit,)), Turn(text="Edited it.")])
    assert [r["read_sha"] for r in lab.requests] == [source_sha("x = 1"),
                                                     source_sha("x = 1  # mine")]
    saved = nbformat.read(str(path), as_version=4)
    assert [c.source for c in saved.cells] == ["import pandas as pd  # also mine",
                                               "x = 2  # mine"]


async def test_insert_below_the_asking_cell_that_is_not_saved_yet(
        tmp_path: Path, scripted_model: Any) -> None:
    path = analysis(tmp_path / "ws")
    lab = FakeLab(tmp_path / "home", [path])

    def asking_cell(notebook: Any) -> None:
        cell = nbformat.v4.new_code_cell("%%mercury\nplot sales below")
        cell.id = "asking"
        notebook.cells.insert(1, cell)

    lab.type_unsaved(path, asking_cell)
    await run(path, tmp_path / "home", scripted_model, lab, [
        Turn(tool_calls=(call("insert_notebook_cell", path="analysis.ipynb", index=0,
                              cell_type="code", source="sales.plot()",
                              after_cell_id="asking"),)),
        Turn(text="Added the plot below your cell.")])
    saved = nbformat.read(str(path), as_version=4)
    assert [c.id for c in saved.cells][:2] == ["load", "asking"]
    assert [c.source for c in saved.cells][2:] == ["sales.plot()", "x = 1"]


async def test_a_notebook_without_cell_ids_is_edited_live_by_place(
        tmp_path: Path, scripted_model: Any) -> None:
    """nbformat 4.4 (no cell ids; JupyterLab keeps it so on save): the edit, the insert and
    the outputs go to the open document by place, never under it on disk."""
    folder = tmp_path / "ws"
    folder.mkdir()
    path = folder / "analysis.ipynb"
    path.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 4, "metadata": {},
                                "cells": [{"cell_type": "code", "metadata": {}, "outputs": [],
                                           "execution_count": None, "source": "x = 1"},
                                          {"cell_type": "code", "metadata": {}, "outputs": [],
                                           "execution_count": None, "source": "print(x)"}]}))
    lab = FakeLab(tmp_path / "home", [path])
    lab.type_unsaved(path, lambda notebook: setattr(notebook.cells[1], "source",
                                                    "print(x)  # mine"))
    await run(path, tmp_path / "home", scripted_model, lab, [
        Turn(tool_calls=(call("read_notebook", path="analysis.ipynb"),)),
        Turn(tool_calls=(call("edit_notebook_cell", path="analysis.ipynb", index=0,
                              source="x = 2"),)),
        Turn(tool_calls=(call("insert_notebook_cell", path="analysis.ipynb", index=2,
                              cell_type="code", source="y = x * 3"),)),
        Turn(text="Set x to 2 and added y.")])
    assert [(r["op"], r.get("cell_id"), r.get("index")) for r in lab.requests] == [
        ("edit", None, 0), ("insert", None, 2)]
    saved = nbformat.read(str(path), as_version=4)
    assert saved.nbformat_minor == 4 and not any("id" in c for c in saved.cells)
    assert [c.source for c in saved.cells] == ["x = 2", "print(x)  # mine", "y = x * 3"]
