"""The live-edit route through a real jupyter_server: open reports, polls, answers, a panel task."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from live_scripts import LIVE_SOURCE, live_insert
from nbformat import v4
from test_handlers import Fetch, call, models, on_server_loop, start, wait_status

from mercury_nb.contract.home import home_of
from mercury_nb.ledger.live_edits import store_for
from mercury_nb.testing import register_scripted_model

__all__ = ["models", "register_scripted_model"]


@pytest.fixture
def jp_server_config() -> dict[str, Any]:
    return {"ServerApp": {"jpserver_extensions": {"mercury_nb.server": True}}}


def sales(folder: Path) -> Path:
    notebook = v4.new_notebook()
    notebook.cells = [v4.new_markdown_cell("# Sales"), v4.new_code_cell("x = 1")]
    path = folder / "sales.ipynb"
    nbformat.write(notebook, path)
    return path


@on_server_loop
async def test_a_poll_reports_open_notebooks_inside_the_root(jp_fetch: Fetch,
                                                             jp_root_dir: Path) -> None:
    path = sales(jp_root_dir)
    reply = await call(jp_fetch, "live", "poll", method="POST",
                       body={"paths": ["sales.ipynb", "../outside.ipynb", "notes.txt"],
                             "wait": False})
    assert reply == {"requests": []}
    store = store_for(home_of())
    assert store.seen_at(path.resolve()) is not None
    assert store.seen_at((jp_root_dir / ".." / "outside.ipynb").resolve()) is None


@on_server_loop
async def test_a_held_poll_delivers_a_request_and_takes_the_answer(jp_fetch: Fetch,
                                                                    jp_root_dir: Path) -> None:
    path = sales(jp_root_dir).resolve()
    store = store_for(home_of())
    request_id = store.submit(path, {"op": "edit", "cell_id": "c1", "source": "x = 2"})
    reply = await call(jp_fetch, "live", "poll", method="POST", body={"paths": ["sales.ipynb"]})
    assert reply == {"requests": [{"op": "edit", "cell_id": "c1", "source": "x = 2",
                                   "id": request_id, "path": "sales.ipynb"}]}
    answered = await call(jp_fetch, "live", "ack", method="POST",
                          body={"id": request_id, "state": "refused", "source": "x = 9",
                                "cell": "c1"})
    assert answered == {"id": request_id, "state": "refused"}
    assert store.answer(request_id) == ("refused", {"source": "x = 9", "cell": "c1"})
    again = await call(jp_fetch, "live", "ack", method="POST", expect=409,
                       body={"id": request_id, "state": "applied"})
    assert again == {"error": f"edit request {request_id} is no longer waiting"}
    bad = await call(jp_fetch, "live", "ack", method="POST", expect=400,
                     body={"id": request_id, "state": "done"})
    assert bad["error"].startswith("invalid request")


@on_server_loop
async def test_a_panel_task_inserts_into_the_open_notebook(jp_fetch: Fetch, jp_root_dir: Path,
                                                           models: Any) -> None:
    (jp_root_dir / "proj").mkdir()
    path = sales(jp_root_dir / "proj")
    await call(jp_fetch, "live", "poll", method="POST",
               body={"paths": ["proj/sales.ipynb"], "wait": False})
    task_id = await start(jp_fetch, models("live-insert", live_insert()), "Plot sales.", "proj")
    reply = await call(jp_fetch, "live", "poll", method="POST",
                       body={"paths": ["proj/sales.ipynb"]})
    [request] = reply["requests"]
    assert request["op"] == "insert" and request["path"] == "proj/sales.ipynb"
    assert request["cell"]["source"] == LIVE_SOURCE
    assert request["cell"]["metadata"]["mercury"]["task"] == task_id
    notebook = nbformat.read(path, as_version=4)  # as the labextension saves it
    notebook.cells.insert(1, nbformat.from_dict(request["cell"]))
    nbformat.write(notebook, path)
    await call(jp_fetch, "live", "ack", method="POST",
               body={"id": request["id"], "state": "applied"})
    detail = await wait_status(jp_fetch, task_id, ("completed", "paused", "failed"), 60)
    assert detail["task"]["status"] == "completed", detail["task"]
    assert store_for(home_of()).answer(request["id"]) == ("applied", {})
    # the tool took the answer and did not write the cell to the file a second time
    assert [cell.source for cell in nbformat.read(path, as_version=4).cells] == [
        "# Sales", LIVE_SOURCE, "x = 1"]


@on_server_loop
async def test_an_outputs_answer_carries_the_cells_it_skipped(jp_fetch: Fetch,
                                                              jp_root_dir: Path) -> None:
    path = sales(jp_root_dir).resolve()
    store = store_for(home_of())
    ran = [{"cell_id": "c1", "read_sha": "ab", "outputs": [], "execution_count": 1}]
    request_id = store.submit(path, {"op": "outputs", "task": "t", "cells": ran})
    reply = await call(jp_fetch, "live", "poll", method="POST", body={"paths": ["sales.ipynb"]})
    assert reply["requests"][0]["cells"] == ran
    await call(jp_fetch, "live", "ack", method="POST",
               body={"id": request_id, "state": "applied", "skipped": ["c1"]})
    assert store.answer(request_id) == ("applied", {"skipped": ["c1"]})
    bad = await call(jp_fetch, "live", "ack", method="POST", expect=400,
                     body={"id": request_id, "state": "applied", "skipped": "c1"})
    assert bad["error"].startswith("invalid request")
