"""Cells the agent changed that then ran in the user's kernel, through a whole task: they are the
evidence (no fresh-kernel re-run), and an error there is the blocker named with its cell."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat

from mercury_nb.agent.task import run_new_session as run_task
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.testing import Turn, call
from mercury_nb.tools.kernel_access import NamespaceKernel


def cfg(tmp_path: Path, **kw: Any) -> MercuryConfig:
    return MercuryConfig(workdir=tmp_path, retry_base_s=0.0, permissions="auto", **kw)


def analysis(path: Path) -> None:
    """Cell 1 reads data only the user's kernel has: a fresh kernel could not run it."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("sales = load_private_sales()"),
                nbformat.v4.new_code_cell("")]
    nb.cells[0]["id"], nb.cells[1]["id"] = "load", "total"
    nbformat.write(nb, str(path))


def edit(source: str) -> Turn:
    return Turn(tool_calls=(call("edit_notebook_cell", path="analysis.ipynb", index=1,
                                 source=source),))


RUN = Turn(tool_calls=(call("run_cells_in_kernel", path="analysis.ipynb",
                            cell_ids=["total"]),))


async def test_changed_cells_that_ran_in_the_kernel_are_the_evidence(
        tmp_path: Path, scripted_model) -> None:
    analysis(tmp_path / "analysis.ipynb")
    kernel = NamespaceKernel({"sales": [3, 4]})
    model = scripted_model([edit("total = sum(sales)"), RUN, Turn(text="Added the total.")])
    outcome = await run_task("add the total of sales to analysis.ipynb", cfg(tmp_path),
                             model=model, kernel=kernel)
    assert outcome.status == "completed", outcome.banner
    assert ("✓ Verified: cell 2 ran in your kernel (not re-run from a fresh kernel)"
            in outcome.banner), outcome.banner
    assert not [e for e in outcome.evidence if e.kind == "notebook"]  # no fresh run
    assert kernel.namespace()["total"] == 7


async def test_an_error_in_the_kernel_is_the_blocker(tmp_path: Path, scripted_model) -> None:
    analysis(tmp_path / "analysis.ipynb")
    model = scripted_model([edit("total = sum(sales) / 0"), RUN, Turn(text="Done."),
                            Turn(text="Done, really.")])
    outcome = await run_task("add the total of sales to analysis.ipynb", cfg(tmp_path),
                             model=model, kernel=NamespaceKernel({"sales": [3, 4]}))
    assert outcome.status == "paused", outcome.banner
    assert "Task complete" not in outcome.banner
    assert ("Last check: run cells of analysis.ipynb in your kernel ✗ (cell 2: "
            "ZeroDivisionError: division by zero)") in outcome.banner, outcome.banner


async def test_cells_run_in_two_calls_and_code_run_after_count_together(
        tmp_path: Path, scripted_model) -> None:
    """Each kernel run is a mutating action of its own: the evidence is measured from the last
    change of the notebook, not from the last run (which would leave only the last call)."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("sales = load_private_sales()"),
                nbformat.v4.new_code_cell(""), nbformat.v4.new_code_cell("")]
    for cell, cell_id in zip(nb.cells, ("load", "total", "mean"), strict=True):
        cell["id"] = cell_id
    nbformat.write(nb, str(tmp_path / "analysis.ipynb"))
    kernel = NamespaceKernel({"sales": [3, 4]})
    model = scripted_model([
        edit("total = sum(sales)"),
        Turn(tool_calls=(call("edit_notebook_cell", path="analysis.ipynb", index=2,
                              source="mean = total / len(sales)"),)),
        RUN,
        Turn(tool_calls=(call("run_cells_in_kernel", path="analysis.ipynb",
                              cell_ids=["mean"]),)),
        Turn(tool_calls=(call("run_in_kernel", code="print(mean)"),)),
        Turn(text="Added the total and the mean.")])
    outcome = await run_task("add the total and the mean of sales to analysis.ipynb",
                             cfg(tmp_path), model=model, kernel=kernel)
    assert ("✓ Verified: cells 2–3 ran in your kernel (not re-run from a fresh kernel)"
            in outcome.banner), outcome.banner
    assert outcome.status == "completed"
