"""Notebook tools on a notebook open in JupyterLab: requests through the ledger, answers, fallback.

JupyterLab's part is played through the same ledger store the server extension uses: the test
claims the request and answers it as the labextension would.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat import v4

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.live_edit import source_sha
from mercury_nb.ledger.live_edits import LiveEditStore
from mercury_nb.tools import notebook_live
from mercury_nb.tools.base import ToolContext, ToolResult
from mercury_nb.tools.registry import ToolRegistry
from mercury_nb.workspace.confinement import Workspace


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LiveEditStore]:
    made = LiveEditStore(tmp_path / "home")
    yield made
    made.close()


@pytest.fixture
def live_ctx(root: Path, store: LiveEditStore) -> ToolContext:
    config = MercuryConfig(workdir=root, live_edit_wait_s=5.0)
    return ToolContext(root=Workspace(root), config=config, process_scope="t1", step=4,
                       live_edits=store)


@pytest.fixture
def nb(root: Path) -> Path:
    notebook = v4.new_notebook()
    notebook.cells = [v4.new_markdown_cell("# Sales"), v4.new_code_cell("x = 1")]
    notebook.cells[0].id, notebook.cells[1].id = "head", "code1"
    path = root / "sales.ipynb"
    nbformat.write(notebook, path)
    return path


async def call(registry: ToolRegistry, ctx: ToolContext, name: str, **args: Any) -> ToolResult:
    return await registry.execute(name, json.dumps(args), ctx)


async def lab_answers(store: LiveEditStore, path: Path, state: str,
                      reply: dict[str, Any]) -> dict[str, Any]:
    """Play JupyterLab: take the one request for ``path`` and answer it; the request."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        claimed = store.claim([path])
        if claimed:
            (request_id, _, request), = claimed
            assert store.acknowledge(request_id, state, reply)
            return request
        await asyncio.sleep(0.005)
    raise AssertionError("no edit request came")


async def test_not_open_edits_the_file(registry: ToolRegistry, live_ctx: ToolContext,
                                       store: LiveEditStore, nb: Path) -> None:
    result = await call(registry, live_ctx, "edit_notebook_cell", path="sales.ipynb", index=1,
                        source="x = 2")
    assert result.ok and "open in JupyterLab" not in result.content
    assert nbformat.read(nb, as_version=4).cells[1].source == "x = 2"
    assert store.claim([nb]) == []  # no request was made


async def test_open_edit_goes_to_lab(registry: ToolRegistry, live_ctx: ToolContext,
                                     store: LiveEditStore, nb: Path) -> None:
    await call(registry, live_ctx, "read_notebook", path="sales.ipynb")
    store.report_open([nb])
    running = asyncio.create_task(call(registry, live_ctx, "edit_notebook_cell",
                                       path="sales.ipynb", index=1, source="x = 2"))
    request = await lab_answers(store, nb, "applied", {})
    result = await running
    assert result.ok and result.changed_paths == ("sales.ipynb",)
    assert result.content == ("edited cell code1 in sales.ipynb, open in JupyterLab "
                              "(applied there and saved)")
    assert request == {"op": "edit", "cell_id": "code1", "index": 1,
                       "read_sha": source_sha("x = 1"), "source": "x = 2",
                       "mercury": {"task": "t1", "step": 4}, "clear_outputs": True}
    assert nbformat.read(nb, as_version=4).cells[1].source == "x = 1"  # Lab saves, not the tool


async def test_lab_refuses_a_cell_the_user_changed(registry: ToolRegistry,
                                                   live_ctx: ToolContext,
                                                   store: LiveEditStore, nb: Path) -> None:
    store.report_open([nb])
    running = asyncio.create_task(call(registry, live_ctx, "edit_notebook_cell",
                                       path="sales.ipynb", index=1, source="x = 2"))
    await lab_answers(store, nb, "refused", {"source": "x = 1  # typing", "cell": "code1"})
    result = await running
    assert not result.ok
    assert result.content == ("refused: cell code1 changed since you read it; its source now: "
                              "x = 1  # typing")
    assert nbformat.read(nb, as_version=4).cells[1].source == "x = 1"


async def test_insert_goes_below_its_anchor(registry: ToolRegistry, live_ctx: ToolContext,
                                            store: LiveEditStore, nb: Path) -> None:
    store.report_open([nb])
    running = asyncio.create_task(call(registry, live_ctx, "insert_notebook_cell",
                                       path="sales.ipynb", index=0, cell_type="code",
                                       source="plot()", after_cell_id="head"))
    request = await lab_answers(store, nb, "applied", {})
    result = await running
    assert result.ok and "after cell head in sales.ipynb, open in JupyterLab" in result.content
    assert request["op"] == "insert" and request["after_cell_id"] == "head"
    assert request["index"] == 1
    assert request["cell"]["source"] == "plot()"
    assert request["cell"]["metadata"]["mercury"] == {"task": "t1", "step": 4}
    assert request["cell_id"] == request["cell"]["id"]


async def test_no_answer_in_time_edits_the_file(registry: ToolRegistry, root: Path,
                                                store: LiveEditStore, nb: Path) -> None:
    ctx = ToolContext(root=Workspace(root),
                      config=MercuryConfig(workdir=root, live_edit_wait_s=0.05),
                      live_edits=store)
    store.report_open([nb])  # open, but no JupyterLab takes the request
    result = await call(registry, ctx, "edit_notebook_cell", path="sales.ipynb", index=1,
                        source="x = 3")
    assert result.ok and "open in JupyterLab" not in result.content
    assert nbformat.read(nb, as_version=4).cells[1].source == "x = 3"
    assert store.claim([nb]) == []  # withdrawn: a late JupyterLab never applies it


async def test_lab_says_not_open_edits_the_file(registry: ToolRegistry,
                                                live_ctx: ToolContext,
                                                store: LiveEditStore, nb: Path) -> None:
    store.report_open([nb])
    running = asyncio.create_task(call(registry, live_ctx, "edit_notebook_cell",
                                       path="sales.ipynb", index=1, source="x = 4"))
    await lab_answers(store, nb, "not-open", {})
    assert (await running).ok
    assert nbformat.read(nb, as_version=4).cells[1].source == "x = 4"


async def test_a_disk_change_since_reading_is_refused(registry: ToolRegistry,
                                                      live_ctx: ToolContext,
                                                      store: LiveEditStore, nb: Path) -> None:
    await call(registry, live_ctx, "read_notebook", path="sales.ipynb")
    notebook = nbformat.read(nb, as_version=4)
    notebook.cells[1].source = "x = 10"
    nbformat.write(notebook, nb)
    result = await call(registry, live_ctx, "edit_notebook_cell", path="sales.ipynb", index=1,
                        source="x = 2")
    assert not result.ok
    assert "cell code1 of sales.ipynb changed since you last read it" in result.content
    assert result.content.endswith("\nx = 10")  # the disk's compare-and-swap, before any route
    assert nbformat.read(nb, as_version=4).cells[1].source == "x = 10"


async def test_open_delete_goes_to_lab(registry: ToolRegistry, live_ctx: ToolContext,
                                       store: LiveEditStore, nb: Path) -> None:
    await call(registry, live_ctx, "read_notebook", path="sales.ipynb")
    store.report_open([nb])
    running = asyncio.create_task(call(registry, live_ctx, "delete_notebook_cell",
                                       path="sales.ipynb", cell_id="code1"))
    request = await lab_answers(store, nb, "applied", {})
    result = await running
    assert result.ok and result.changed_paths == ("sales.ipynb",)
    assert result.content == ("deleted a code cell (code1) in sales.ipynb, open in JupyterLab "
                              "(applied there and saved)")
    assert request == {"op": "delete", "cell_id": "code1", "read_sha": source_sha("x = 1"),
                       "task": "t1"}
    assert len(nbformat.read(nb, as_version=4).cells) == 2  # Lab saves, not the tool
    assert ("sales.ipynb", "code1") not in live_ctx.cell_hashes


async def test_lab_refuses_to_delete_a_cell_the_user_changed(
        registry: ToolRegistry, live_ctx: ToolContext, store: LiveEditStore, nb: Path) -> None:
    store.report_open([nb])
    running = asyncio.create_task(call(registry, live_ctx, "delete_notebook_cell",
                                       path="sales.ipynb", cell_id="code1"))
    await lab_answers(store, nb, "refused", {"source": "x = 1  # mine", "cell": "code1"})
    result = await running
    assert not result.ok
    assert result.content == ("refused: cell code1 changed since you read it; its source now: "
                              "x = 1  # mine")
    assert len(nbformat.read(nb, as_version=4).cells) == 2


async def test_delete_not_open_or_unanswered_deletes_on_disk(
        registry: ToolRegistry, root: Path, store: LiveEditStore, nb: Path) -> None:
    ctx = ToolContext(root=Workspace(root),
                      config=MercuryConfig(workdir=root, live_edit_wait_s=0.05),
                      live_edits=store)
    result = await call(registry, ctx, "delete_notebook_cell", path="sales.ipynb",
                        cell_id="head")
    assert result.ok and "open in JupyterLab" not in result.content
    store.report_open([nb])  # open, but no JupyterLab takes the request
    result = await call(registry, ctx, "delete_notebook_cell", path="sales.ipynb",
                        cell_id="code1")
    assert result.ok and "open in JupyterLab" not in result.content
    assert nbformat.read(nb, as_version=4).cells == []
    assert store.claim([nb]) == []  # withdrawn


async def test_outputs_request_names_each_cell_and_its_ran_source(
        live_ctx: ToolContext, store: LiveEditStore, nb: Path) -> None:
    store.report_open([nb])
    ran = [notebook_live.RanCell("code1", "x = 1", [{"output_type": "stream", "name": "stdout",
                                                      "text": "1\n"}], 3),
           notebook_live.RanCell("code2", "y = 2", [], 4)]
    running = asyncio.create_task(asyncio.to_thread(notebook_live.outputs, live_ctx, nb, ran))
    request = await lab_answers(store, nb, "applied", {"skipped": ["code2"]})
    assert await running == notebook_live.OutputsApplied(("code2",))
    assert request["op"] == "outputs" and request["task"] == "t1"
    assert request["cells"] == [
        {"cell_id": "code1", "read_sha": source_sha("x = 1"), "execution_count": 3,
         "outputs": [{"output_type": "stream", "name": "stdout", "text": "1\n"}]},
        {"cell_id": "code2", "read_sha": source_sha("y = 2"), "execution_count": 4,
         "outputs": []}]


async def test_outputs_refused_means_every_cell_skipped(
        live_ctx: ToolContext, store: LiveEditStore, nb: Path) -> None:
    store.report_open([nb])
    ran = [notebook_live.RanCell("code1", "x = 1", [], 1)]
    running = asyncio.create_task(asyncio.to_thread(notebook_live.outputs, live_ctx, nb, ran))
    await lab_answers(store, nb, "refused", {"skipped": ["code1"]})
    assert await running == notebook_live.OutputsApplied(("code1",))


def test_outputs_without_lab_or_ids_go_to_disk(live_ctx: ToolContext, store: LiveEditStore,
                                              nb: Path) -> None:
    ran = [notebook_live.RanCell("code1", "x = 1", [], 1)]
    store.report_open([nb])
    no_route = dataclasses.replace(live_ctx, live_edits=None)
    assert notebook_live.outputs(no_route, nb, ran) is None  # the task has no live route
    assert store.claim([nb]) == []
    assert notebook_live.outputs(live_ctx, nb, [notebook_live.RanCell("", "x", [], 1)]) is None
    store.report_closed([nb])
    assert notebook_live.outputs(live_ctx, nb, ran) is None  # not open


@pytest.mark.parametrize("tool", ["edit_notebook_cell", "delete_notebook_cell"])
async def test_a_refused_change_is_retried_on_the_source_the_refusal_showed(
        registry: ToolRegistry, live_ctx: ToolContext, store: LiveEditStore, nb: Path,
        tool: str) -> None:
    """The user typed in cell code1 and has not saved: the open document refuses the first
    try and shows its source, which the agent has now read; the second try names that source
    (not the file's, which the user's typing has not reached), so the document takes it."""
    args = ({"index": 1, "source": "x = 2"} if tool == "edit_notebook_cell"
            else {"cell_id": "code1"})
    await call(registry, live_ctx, "read_notebook", path="sales.ipynb")
    store.report_open([nb])
    first = asyncio.create_task(call(registry, live_ctx, tool, path="sales.ipynb", **args))
    await lab_answers(store, nb, "refused", {"source": "x = 1  # typing", "cell": "code1"})
    assert not (await first).ok
    second = asyncio.create_task(call(registry, live_ctx, tool, path="sales.ipynb", **args))
    request = await lab_answers(store, nb, "applied", {})
    assert (await second).ok
    assert request["read_sha"] == source_sha("x = 1  # typing")


async def test_insert_below_a_cell_not_saved_yet_goes_to_the_open_notebook(
        registry: ToolRegistry, live_ctx: ToolContext, store: LiveEditStore, nb: Path) -> None:
    """The ``%%mercury`` cell that asked is usually not saved yet: its id is in the open
    document only, which places the new cell below it (and refuses when it lacks it too)."""
    store.report_open([nb])
    running = asyncio.create_task(call(registry, live_ctx, "insert_notebook_cell",
                                       path="sales.ipynb", index=0, cell_type="code",
                                       source="plot()", after_cell_id="asking-cell"))
    request = await lab_answers(store, nb, "applied", {})
    result = await running
    assert result.ok and "after cell asking-cell in sales.ipynb" in result.content
    assert request["after_cell_id"] == "asking-cell" and request["after_required"] is True
    missing = asyncio.create_task(call(registry, live_ctx, "insert_notebook_cell",
                                       path="sales.ipynb", index=0, cell_type="code",
                                       source="plot()", after_cell_id="nowhere"))
    await lab_answers(store, nb, "refused", {"cell": "nowhere"})
    result = await missing
    assert not result.ok
    assert result.content == ("Error: no cell with id 'nowhere' in sales.ipynb, on disk or in "
                              "the notebook open in JupyterLab (read_notebook shows the cells)")
    assert len(nbformat.read(nb, as_version=4).cells) == 2


async def test_insert_below_an_unknown_cell_of_a_closed_notebook_is_an_error(
        registry: ToolRegistry, live_ctx: ToolContext, nb: Path) -> None:
    result = await call(registry, live_ctx, "insert_notebook_cell", path="sales.ipynb",
                        index=0, cell_type="code", source="plot()", after_cell_id="nowhere")
    assert not result.ok and "no cell with id 'nowhere' in sales.ipynb" in result.content


@pytest.mark.parametrize(("tool", "args"), [
    ("write_file", {"content": "{}"}),
    ("edit_file", {"old_text": "x = 1", "new_text": "x = 2"}),
    ("delete_file", {}),
])
async def test_a_whole_file_tool_leaves_an_open_notebook_to_the_cell_tools(
        registry: ToolRegistry, live_ctx: ToolContext, store: LiveEditStore, nb: Path,
        tool: str, args: dict[str, Any]) -> None:
    """A write of the whole .ipynb under the open document would make JupyterLab reload it
    (or ask) and lose the user's unsaved typing: refused, naming the cell tools."""
    before = nb.read_text()
    store.report_open([nb])
    result = await call(registry, live_ctx, tool, path="sales.ipynb", **args)
    assert not result.ok
    assert "sales.ipynb is open in JupyterLab: change its cells with edit_notebook_cell" in (
        result.content)
    assert nb.read_text() == before and store.claim([nb]) == []
    store.report_closed([nb])
    assert (await call(registry, live_ctx, tool, path="sales.ipynb", **args)).ok  # closed
