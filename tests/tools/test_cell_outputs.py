"""run_cells' outputs written back: on disk for the cells still as they ran (by id), and into
the notebook open in JupyterLab (played by the test Lab) when it is open."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.ledger.live_edits import LiveEditStore
from mercury_nb.testing.fake_lab import FakeLab
from mercury_nb.tools.base import ToolContext
from mercury_nb.tools.cell_outputs import write_back
from mercury_nb.tools.registry import ToolRegistry
from mercury_nb.workspace.confinement import Workspace


def notebook(path: Path, *cells: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(cell) for cell in cells]
    for i, cell in enumerate(nb.cells):
        cell.id = f"c{i}"
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, str(path))
    return path


def ran(index: int, source: str, text: str, count: int) -> dict[str, Any]:
    return {"index": index, "source": source, "execution_count": count,
            "outputs": [{"output_type": "stream", "name": "stdout", "text": text}]}


@pytest.fixture
def ctx(root: Path) -> ToolContext:
    return ToolContext(root=Workspace(root), process_scope="outs",
                       config=MercuryConfig(workdir=root, live_edit_wait_s=5.0))


@pytest.fixture
def installed(tmp_path: Path, ctx: ToolContext) -> Iterator[Path]:
    """The ledger home live edits go through (the task's route, in its tool context)."""
    home = tmp_path / "home"
    store = LiveEditStore(home)
    ctx.live_edits = store
    yield home
    store.close()


def test_a_cell_changed_while_it_ran_keeps_its_source_and_outputs(
        root: Path, ctx: ToolContext) -> None:
    path = notebook(root / "nb.ipynb", "x = 'edited by the user'", "y = 2")
    done = [ran(0, "x = 'as it ran'", "old\n", 1), ran(1, "y = 2", "two\n", 2)]
    assert write_back(ctx, path, "nb.ipynb", done, ["c0", "c1"]) == (True, [0])
    stored = nbformat.read(str(path), as_version=4)
    assert (stored.cells[0].source, stored.cells[0].outputs) == ("x = 'edited by the user'", [])
    assert stored.cells[1].outputs[0]["text"] == "two\n"


def test_on_disk_a_cell_is_found_by_its_id_after_the_user_inserted_one(
        root: Path, ctx: ToolContext) -> None:
    path = notebook(root / "nb.ipynb", "y = 2")
    stored = nbformat.read(str(path), as_version=4)
    stored.cells.insert(0, nbformat.v4.new_code_cell("# the user's new cell"))
    nbformat.write(stored, str(path))
    assert write_back(ctx, path, "nb.ipynb", [ran(0, "y = 2", "two\n", 1)], ["c0"]) == (True, [])
    stored = nbformat.read(str(path), as_version=4)
    assert stored.cells[0].outputs == [] and stored.cells[1].outputs[0]["text"] == "two\n"


@pytest.mark.parametrize("live", [False, True])
def test_an_agent_cell_keeps_its_own_outputs(root: Path, ctx: ToolContext, installed: Path,
                                             live: bool) -> None:
    """A ``%%mercury`` cell's outputs are its task's widget and verdict (the asking cell's
    is live while the task runs), and a ``%mercury undo`` line's its report; in a fresh
    kernel such a cell only prints that it was skipped, which must not replace them."""
    asking = "%%mercury --model m\nfix the error above"
    undo = "x = 1\n%mercury undo abc"
    path = notebook(root / "nb.ipynb", "y = 2", asking, undo)
    stored = nbformat.read(str(path), as_version=4)
    stored.cells[1].outputs = [nbformat.v4.new_output("stream", text="the verdict\n")]
    nbformat.write(stored, str(path))
    lab = FakeLab(installed, [path]) if live else None
    try:
        done = [ran(0, "y = 2", "two\n", 1), ran(1, asking, "skipped\n", 2),
                ran(2, undo, "skipped\n", 3)]
        assert write_back(ctx, path, "nb.ipynb", done, ["c0", "c1", "c2"]) == (True, [])
    finally:
        if lab is not None:
            lab.close()
    if lab is not None:
        assert [c["cell_id"] for r in lab.requests for c in r["cells"]] == ["c0"]
    stored = nbformat.read(str(path), as_version=4)
    assert stored.cells[0].outputs[0]["text"] == "two\n"
    assert stored.cells[1].outputs[0]["text"] == "the verdict\n"
    assert stored.cells[2].outputs == []


def test_open_in_lab_the_outputs_go_through_the_open_notebook(
        root: Path, ctx: ToolContext, installed: Path) -> None:
    path = notebook(root / "nb.ipynb", "x = 1", "y = 'typed since'")
    lab = FakeLab(installed, [path])
    try:
        done = [ran(0, "x = 1", "one\n", 1), ran(1, "y = 2", "two\n", 2)]
        assert write_back(ctx, path, "nb.ipynb", done, ["c0", "c1"]) == (True, [1])
    finally:
        lab.close()
    assert [r["op"] for r in lab.requests] == ["outputs"]
    stored = nbformat.read(str(path), as_version=4)
    assert (stored.cells[0].outputs[0]["text"], stored.cells[0].execution_count) == ("one\n", 1)
    assert stored.cells[1].outputs == []


def test_a_notebook_without_cell_ids_is_written_on_disk_even_when_open(
        root: Path, ctx: ToolContext, installed: Path) -> None:
    path = notebook(root / "nb.ipynb", "x = 1")
    opener = LiveEditStore(installed)
    opener.report_open([path.resolve()])  # open, but nobody would answer
    opener.close()
    assert write_back(ctx, path, "nb.ipynb", [ran(0, "x = 1", "one\n", 1)], [""]) == (True, [])
    assert nbformat.read(str(path), as_version=4).cells[0].outputs[0]["text"] == "one\n"


async def test_run_cells_on_an_open_notebook_writes_its_outputs_live(
        root: Path, ctx: ToolContext, installed: Path, registry: ToolRegistry) -> None:
    path = notebook(root / "nb.ipynb", "x = 20", "print(x + 1)")
    lab = FakeLab(installed, [path])
    try:
        result = await registry.execute("run_cells", {"path": "nb.ipynb"}, ctx)
    finally:
        lab.close()
    assert result.ok, result.content
    assert "Outputs were written into nb.ipynb." in result.content
    assert result.changed_paths == ("nb.ipynb",) and result.notebook_run == "nb.ipynb"
    assert [r["op"] for r in lab.requests] == ["outputs"]
    assert [c["cell_id"] for c in lab.requests[0]["cells"]] == ["c0", "c1"]
    stored = nbformat.read(str(path), as_version=4)
    assert stored.cells[1].outputs[0]["text"] == "21\n"
    assert [c.execution_count for c in stored.cells] == [1, 2]
