"""In a real kernel: the task asked from a cell learns its notebook (JPY_SESSION_NAME) and the
cell's id (the execute request's metadata.cellId, as JupyterLab sends it; nbclient does not, so
the request is sent here by hand), and the cell it inserts "below this cell" lands right after
the asking cell in the notebook on disk, carrying its provenance."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_client.manager import start_new_kernel

from mercury_nb.testing import LoopbackServer, Turn, call
from tests.hostile.test_endings_stop import cli_env

pytestmark = pytest.mark.kernel

ASKING = "asking-cell"


def execute(kc: Any, code: str, cell_id: str | None = None, timeout: float = 120) -> dict[str, Any]:
    """Send one execute request (with ``metadata.cellId`` when given) and return its reply."""
    content = {"code": code, "silent": False, "store_history": True, "user_expressions": {},
               "allow_stdin": False, "stop_on_error": True}
    msg = kc.session.msg("execute_request", content,
                         metadata={"cellId": cell_id} if cell_id else {})
    kc.shell_channel.send(msg)
    while True:
        reply: dict[str, Any] = kc.get_shell_msg(timeout=timeout)
        if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
            return reply


def test_insert_below_the_asking_cell(
        tmp_path: Path, loopback_server: Callable[..., LoopbackServer]) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("%load_ext mercury_nb\nsales = [1, 2]"),
                nbformat.v4.new_code_cell("%%mercury\nadd a cell below"),
                nbformat.v4.new_markdown_cell("the end")]
    nb.cells[1]["id"] = ASKING
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    path = workspace / "analysis.ipynb"
    nbformat.write(nb, str(path))
    server = loopback_server([
        Turn(tool_calls=(call("insert_notebook_cell", path="analysis.ipynb", index=0,
                              cell_type="code", source="print(sum(sales))",
                              after_cell_id=ASKING),)),
        Turn(tool_calls=(call("run_cells", path="analysis.ipynb"),)),
        Turn(text="Added the cell below yours."),
    ])
    env = {**cli_env(home), "JPY_SESSION_NAME": str(path)}
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(workspace), env=env)
    try:
        assert execute(kc, "%load_ext mercury_nb")["content"]["status"] == "ok"
        reply = execute(kc, f"%%mercury --wait --permissions auto --model openai/m "
                            f"--api-base {server.url} --workdir {workspace}"
                            "\nadd a cell below that prints the total",  # run_cells unasked
                        cell_id=ASKING)
        assert reply["content"]["status"] == "ok", reply["content"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    first = json.dumps(server.requests[0]["messages"])
    assert f"with id {ASKING} of the notebook analysis.ipynb" in first, first[-800:]
    cells = nbformat.read(str(path), as_version=4).cells
    assert [c.source for c in cells] == ["%load_ext mercury_nb\nsales = [1, 2]",
                                         "%%mercury\nadd a cell below",
                                         "print(sum(sales))", "the end"]
    assert cells[2].metadata["mercury"]["step"] == 1
    assert isinstance(cells[2].metadata["mercury"]["task"], str)
    assert cells[2].outputs[0]["text"] == "3\n"  # run_cells wrote it back
