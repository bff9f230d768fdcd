"""run_cells through a whole task: a clean run of every cell after the last change is the
notebook's evidence (not re-run at the end), a failing cell is the blocker named with its cell
and the error's last line, and the run's progress reaches the event stream."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat

from mercury_nb.agent.events import AgentEvent, ToolProgress
from mercury_nb.agent.task import run_new_session as run_task
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.ledger.live_edits import LiveEditStore
from mercury_nb.testing import Turn, call
from mercury_nb.testing.fake_lab import FakeLab


def cfg(tmp_path: Path, **kw: Any) -> MercuryConfig:
    return MercuryConfig(permissions="auto", workdir=tmp_path, retry_base_s=0.0, **kw)


def analysis(path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, str(path))


def insert(source: str) -> Turn:
    return Turn(tool_calls=(call("insert_notebook_cell", path="analysis.ipynb", index=1,
                                 cell_type="code", source=source),))


RUN = Turn(tool_calls=(call("run_cells", path="analysis.ipynb"),))


async def test_a_clean_run_of_every_cell_is_the_evidence(tmp_path: Path, scripted_model) -> None:
    analysis(tmp_path / "analysis.ipynb")
    events: list[AgentEvent] = []
    model = scripted_model([insert("print(x + 1)"), RUN, Turn(text="Added and ran it.")])
    outcome = await run_task("add a cell to analysis.ipynb that prints x + 1", cfg(tmp_path),
                             model=model, on_event=events.append)
    assert outcome.status == "completed", outcome.banner
    assert "✓ Verified: analysis.ipynb ran top to bottom in a fresh kernel" in outcome.banner
    runs = [e for e in outcome.evidence if e.command == "run notebook analysis.ipynb"]
    assert [(e.kind, e.exit_code) for e in runs] == [("notebook", 0)]  # not run a second time
    assert [e.text for e in events if isinstance(e, ToolProgress)] == ["cell 1/2", "cell 2/2"]
    stored = nbformat.read(str(tmp_path / "analysis.ipynb"), as_version=4)
    assert stored.cells[1].outputs[0]["text"] == "2\n"  # the user sees the outputs


async def test_a_failing_cell_is_the_blocker(tmp_path: Path, scripted_model) -> None:
    analysis(tmp_path / "analysis.ipynb")
    model = scripted_model([insert("y = x / 0"), RUN, Turn(text="Done."),
                            Turn(text="Done, really.")])
    outcome = await run_task("add a cell to analysis.ipynb", cfg(tmp_path), model=model)
    assert outcome.status == "paused"
    assert "Task complete" not in outcome.banner
    assert ("Last check: run notebook analysis.ipynb ✗ (cell 2: ZeroDivisionError: division "
            "by zero)") in outcome.banner, outcome.banner  # the inserted cell, counted from 1


async def test_a_run_of_some_cells_leaves_the_evidence_to_the_notebook_check(
        tmp_path: Path, scripted_model) -> None:
    analysis(tmp_path / "analysis.ipynb")
    partial = Turn(tool_calls=(call("run_cells", path="analysis.ipynb", cells="0"),))
    model = scripted_model([insert("z = x * 3"), partial, Turn(text="Added the cell.")])
    outcome = await run_task("add a cell to analysis.ipynb", cfg(tmp_path), model=model)
    assert outcome.status == "completed", outcome.banner
    assert [e.command for e in outcome.evidence if e.kind == "notebook"] == [
        "run cells 1 of analysis.ipynb", "run notebook analysis.ipynb"]
    assert "✓ Verified: analysis.ipynb ran top to bottom in a fresh kernel" in outcome.banner


async def test_a_clean_run_of_an_open_notebook_written_back_live_still_verifies_it(
        tmp_path: Path, scripted_model) -> None:
    analysis(tmp_path / "analysis.ipynb")
    home = tmp_path / "home"
    store = LiveEditStore(home)
    lab = FakeLab(home, [tmp_path / "analysis.ipynb"])
    try:
        model = scripted_model([insert("print(x + 1)"), RUN, Turn(text="Added and ran it.")])
        outcome = await run_task("add a cell to analysis.ipynb that prints x + 1",
                                 cfg(tmp_path, live_edit_wait_s=5.0), model=model,
                                 live_edits=store)
    finally:
        lab.close()
        store.close()
    assert [r["op"] for r in lab.requests] == ["insert", "outputs"]  # both went live
    assert outcome.status == "completed", outcome.banner
    assert "✓ Verified: analysis.ipynb ran top to bottom in a fresh kernel" in outcome.banner
    runs = [e for e in outcome.evidence if e.command == "run notebook analysis.ipynb"]
    assert [(e.kind, e.exit_code) for e in runs] == [("notebook", 0)]  # not run a second time
    stored = nbformat.read(str(tmp_path / "analysis.ipynb"), as_version=4)
    assert stored.cells[1].outputs[0]["text"] == "2\n"


async def test_asked_to_run_the_notebook_its_clean_run_is_the_answer(
        tmp_path: Path, scripted_model) -> None:
    """"Run the notebook": the run_cells run answers it (its outputs written back are the run
    itself, not a later change); no command is demanded."""
    analysis(tmp_path / "analysis.ipynb")
    model = scripted_model([RUN, Turn(text="Ran every cell of analysis.ipynb.")])
    outcome = await run_task("Run the notebook.", cfg(tmp_path), model=model)
    assert outcome.status == "completed", outcome.banner
    assert "✓ Verified: analysis.ipynb ran top to bottom in a fresh kernel" in outcome.banner
    assert model.remaining == 0  # no forced round asked for a command


async def test_asked_to_run_a_named_notebook_a_failing_run_is_not_done(
        tmp_path: Path, scripted_model) -> None:
    path = tmp_path / "analysis.ipynb"
    analysis(path)
    nb = nbformat.read(str(path), as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("1 / 0"))
    nbformat.write(nb, str(path))
    model = scripted_model([RUN, Turn(text="Ran it."), Turn(text="Ran it, really.")])
    outcome = await run_task("Run analysis.ipynb", cfg(tmp_path), model=model)
    assert outcome.status == "paused"
    assert "Task complete" not in outcome.banner
    assert "ZeroDivisionError" in outcome.banner, outcome.banner
