"""run_cells with real kernels: outputs and errors per cell, written back; input, a dead kernel,
time limits and Stop are reported or obeyed, never a hang."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import nbformat
import psutil
import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.tools import processes
from mercury_nb.tools.base import ToolContext, ToolResult
from mercury_nb.tools.registry import ToolRegistry
from mercury_nb.workspace.confinement import Workspace


def notebook(path: Path, *cells: str, markdown_at: int | None = None) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(cell) for cell in cells]
    if markdown_at is not None:
        nb.cells.insert(markdown_at, nbformat.v4.new_markdown_cell("# notes"))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    return path


def context(root: Path, **settings: float) -> tuple[ToolContext, list[str]]:
    shown: list[str] = []
    ctx = ToolContext(root=Workspace(root), config=MercuryConfig(workdir=root, **settings),
                      process_scope="cells-test")
    ctx.progress = shown.append
    return ctx, shown


async def run(registry: ToolRegistry, ctx: ToolContext, **args: object) -> ToolResult:
    return await registry.execute("run_cells", args, ctx)


async def test_every_cell_runs_in_the_notebooks_folder_and_outputs_are_written_back(
        root: Path, registry: ToolRegistry) -> None:
    path = notebook(root / "sub" / "nb.ipynb", "x = 2", "import os\nprint(os.getcwd())",
                    "x * 21", markdown_at=1)
    ctx, shown = context(root)
    result = await run(registry, ctx, path="sub/nb.ipynb")
    assert result.ok, result.content
    assert str((root / "sub").resolve()) in result.content
    assert "execute_result: 42" in result.content
    assert "Every cell ran without error." in result.content
    assert shown == ["cell 1/3", "cell 2/3", "cell 3/3"]
    assert (result.command, result.exit_code, result.notebook_run, result.cells_run) == (
        "run notebook sub/nb.ipynb", 0, "sub/nb.ipynb", "")
    assert result.changed_paths == ("sub/nb.ipynb",)
    stored = nbformat.read(str(path), as_version=4)
    assert [c.get("execution_count") for c in stored.cells] == [1, None, 2, 3]
    assert stored.cells[3].outputs[0]["data"]["text/plain"] == "42"
    assert processes.live_commands("cells-test") == []


async def test_the_failing_cell_is_named_with_its_error_and_later_cells_do_not_run(
        root: Path, registry: ToolRegistry) -> None:
    path = notebook(root / "nb.ipynb", "x = 1", "print('before')\n1 / 0", "print('never')")
    ctx, _ = context(root)
    result = await run(registry, ctx, path="nb.ipynb")
    assert not result.ok
    assert result.cell_error == "cell 2: ZeroDivisionError: division by zero"  # the user's
    assert (result.exit_code, result.timed_out) == (1, False)
    assert "Failed at cell 1: ZeroDivisionError: division by zero." in result.content
    assert "stdout: before" in result.content and "traceback:" in result.content
    assert "Not run: cells 2." in result.content
    assert "\x1b[" not in result.content
    stored = nbformat.read(str(path), as_version=4)
    assert stored.cells[1].outputs[-1]["ename"] == "ZeroDivisionError"
    assert stored.cells[2].outputs == []


@pytest.mark.parametrize(
    ("source", "error"),
    [
        pytest.param("name = input('name? ')", "cell 1: waits for input (input()), which a "
                     "fresh-kernel run cannot give", id="input"),
        pytest.param("import os\nos._exit(3)", "cell 1: the kernel died while it ran",
                     id="kernel-exits"),
        pytest.param("import time\ntime.sleep(120)", "cell 1: ran over its time limit (3 s)",
                     id="cell-timeout"),
    ],
)
async def test_a_cell_that_cannot_finish_is_reported_as_such(
        root: Path, registry: ToolRegistry, source: str, error: str) -> None:
    notebook(root / "nb.ipynb", source, "print('after')")
    ctx, _ = context(root, notebook_timeout_s=3)
    result = await run(registry, ctx, path="nb.ipynb")
    assert not result.ok
    assert result.cell_error == error, result.content  # cells counted from 1, as users do
    assert f"Failed at {error.replace('cell 1', 'cell 0')}." in result.content  # by index
    assert "Not run: cells 1." in result.content
    assert processes.live_commands("cells-test") == []


async def test_the_total_time_limit_ends_the_run(root: Path, registry: ToolRegistry) -> None:
    notebook(root / "nb.ipynb", *["import time\ntime.sleep(2)"] * 4)
    ctx, _ = context(root, notebook_timeout_s=60, notebook_total_timeout_s=5)
    result = await run(registry, ctx, path="nb.ipynb")
    assert not result.ok
    assert "ran over the run's total time limit (5 s)" in result.cell_error, result.content
    assert result.cell_error.startswith(("cell 2:", "cell 3:")), result.cell_error


async def test_some_cells_by_range(root: Path, registry: ToolRegistry) -> None:
    notebook(root / "nb.ipynb", "raise SystemError('not chosen')", "y = 5", "print(y + 1)")
    ctx, shown = context(root)
    result = await run(registry, ctx, path="nb.ipynb", cells="1-2")
    assert result.ok, result.content
    assert "stdout: 6" in result.content
    assert shown == ["cell 1/2", "cell 2/2"]
    assert (result.command, result.cells_run) == ("run cells 2–3 of nb.ipynb", "1–2")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param({"cells": [7]}, "cell index 7 is out of range", id="out-of-range"),
        pytest.param({"cells": "0-x"}, "is not an index or a range", id="unreadable"),
        pytest.param({"path": "none.ipynb"}, "no such notebook: none.ipynb", id="missing"),
    ],
)
async def test_a_bad_request_is_refused_before_a_kernel_starts(
        root: Path, registry: ToolRegistry, args: dict[str, object], message: str) -> None:
    notebook(root / "nb.ipynb", "x = 1")
    ctx, shown = context(root)
    result = await run(registry, ctx, **{"path": "nb.ipynb", **args})
    assert not result.ok and message in result.content
    assert shown == [] and result.command is None


async def test_a_key_a_cell_prints_is_masked_for_the_model(
        root: Path, registry: ToolRegistry) -> None:
    key = "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4"
    path = notebook(root / "nb.ipynb", f"print({key!r})")
    ctx, _ = context(root)
    result = await run(registry, ctx, path="nb.ipynb")
    assert result.ok and key not in result.content and "***" in result.content
    # the user's own notebook keeps what their code printed
    assert key in nbformat.read(str(path), as_version=4).cells[0].outputs[0]["text"]


async def test_stop_kills_the_run_and_its_kernel(root: Path, registry: ToolRegistry) -> None:
    started = root / "started"
    notebook(root / "nb.ipynb", f"open({str(started)!r}, 'w').close()\nimport time\n"
             "time.sleep(300)")
    ctx, _ = context(root)
    call = asyncio.create_task(run(registry, ctx, path="nb.ipynb"))
    deadline = time.monotonic() + 60
    while not started.exists():  # the kernel is running the cell
        assert time.monotonic() < deadline and not call.done()
        await asyncio.sleep(0.05)
    (tracked,) = processes.live_commands("cells-test")
    running = processes.members([tracked])
    assert any("ipykernel" in " ".join(p.cmdline()) for p in running.values())
    stopped_at = time.monotonic()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert time.monotonic() - stopped_at < 5
    alive = [p.pid for p in running.values()
             if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert alive == [] and processes.live_commands("cells-test") == []
