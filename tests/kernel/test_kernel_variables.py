"""The kernel's data as context, in a real kernel run by nbclient: ``@name`` and
inspect_variables on a DataFrame, an array, a dict holding a key and an object whose
``__repr__`` never returns; run_in_kernel's output, display and traceback; its refusal while
another cell runs; and a Stop of ``while True: pass`` ended within 2 s."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.kernel

SETUP = '''
import asyncio, json, struct, time, zlib
import numpy as np, pandas as pd
from mercury_nb.runs import registry
from mercury_nb.testing import ScriptedModel, Turn, call, register_scripted_model

class Forever:
    def __repr__(self):
        while True:
            time.sleep(1)
    __str__ = __repr__

def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

PNG = (b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 640, 480, 8, 0, 0, 0, 0))
       + chunk(b"IDAT", zlib.compress(b"\\x00" * (641 * 480))) + chunk(b"IEND", b""))
df = pd.DataFrame({"month": ["Jan", "Feb", "Mar"], "sales": [10, 20, 30]})
arr = np.arange(12.0).reshape(3, 4)
settings = {"api_key": "sk-abcdefghijklmnopqrstuvwx", "region": "eu"}
forever = Forever()
LOOP = asyncio.get_event_loop()
ENDED = []

class Gated(ScriptedModel):
    def __init__(self, turns, name):
        super().__init__(turns, name=name)
        self.gate, self.entered, self.calls = asyncio.Event(), asyncio.Event(), 0
    def stream(self, request):
        return self._gated(request, self.calls)
    async def _gated(self, request, number):
        self.calls += 1
        if number == 0:
            self.entered.set()
            await self.gate.wait()
        async for piece in ScriptedModel.stream(self, request):
            yield piece

CODE = """from IPython.display import Image, display
display(Image(data=PNG))
print("rows", len(df))
df["double"] = df.sales * 2
undefined_name"""
SPIN = """spinning = registry.latest()
LOOP.call_soon_threadsafe(
    lambda: spinning.task.add_done_callback(lambda _: ENDED.append(time.monotonic())))
STOP_ASKED = time.monotonic()
LOOP.call_soon_threadsafe(spinning.stop)
while True:
    pass"""
look = register_scripted_model("scripted/look", [
    Turn(tool_calls=(call("inspect_variables"),)), Turn(text="Seen them.")])
both = register_scripted_model("scripted/both", [
    Turn(tool_calls=(call("inspect_variables", names=["df"]),)),
    Turn(tool_calls=(call("run_in_kernel", code=CODE),)), Turn(text="Ran it.")])
busy = register_scripted_model("scripted/busy", Gated([
    Turn(tool_calls=(call("run_in_kernel", code="touched = True"),)), Turn(text="No.")],
    "scripted/busy"))
spin = register_scripted_model("scripted/spin", [
    Turn(tool_calls=(call("run_in_kernel", code=SPIN),)), Turn(text="never")])

def tool_result(model, request):
    return model.requests[request].messages[-1]["content"]
'''

CELLS = [
    "%load_ext mercury_nb",
    SETUP,
    "%%mercury --wait --model scripted/look\nWhat do @df, @arr and @nope hold?",
    "print(json.dumps({'first': look.requests[0].messages[1]['content'],"
    " 'listing': tool_result(look, 1)}))",
    "%%mercury --wait --permissions auto --model scripted/both\nAdd a doubled column to @df.",
    "print(json.dumps({'inspected': tool_result(both, 1), 'ran': tool_result(both, 2),"
    " 'columns': list(df.columns), 'banner': registry.latest().result.banner}))",
    "%%mercury --permissions auto --model scripted/busy\nTouch the namespace.",
    (
        "busy_run = registry.latest()\n"
        "await busy.entered.wait()\n"
        "busy.gate.set()\n"
        "await asyncio.wait({busy_run.task}, timeout=60)\n"
        "print(json.dumps({'refused': tool_result(busy, 1), 'touched': 'touched' in dir()}))"
    ),
    (
        "%%mercury --wait --permissions auto --model scripted/spin\nSpin forever."
    ),
    (
        "spin_run = registry.latest()\n"
        "print(json.dumps({'status': spin_run.result.status, 'banner': spin_run.result.banner,"
        " 'took': ENDED[0] - STOP_ASKED if ENDED else None,"
        " 'alive': __import__('mercury_nb.tools.kernel_code', fromlist=['x'])"
        ".running_elsewhere() is not None}))"
    ),
]
LOOK, LOOK_FACTS, BOTH, BOTH_FACTS, BUSY, BUSY_FACTS, SPIN, SPIN_FACTS = range(2, 10)


def run_notebook(workdir: Path) -> nbformat.NotebookNode:
    cells = [nbformat.v4.new_code_cell(src) for src in CELLS]
    nb = nbformat.v4.new_notebook(cells=cells)
    client = NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(workdir)}})
    client.execute()
    return nb


def printed(cell: Any) -> str:
    return "".join(o.text for o in cell.outputs if o.output_type == "stream")


def facts(cell: Any) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(printed(cell).strip().splitlines()[-1])
    return found


@pytest.fixture(scope="module")
def notebook(tmp_path_factory: pytest.TempPathFactory) -> nbformat.NotebookNode:
    mp = pytest.MonkeyPatch()
    mp.setenv("MERCURY_PLAIN", "1")  # inherited by the kernel: its lines are text
    try:
        return run_notebook(tmp_path_factory.mktemp("kernel-vars"))
    finally:
        mp.undo()


def test_at_name_attaches_summaries_and_the_start_line_names_them(
        notebook: nbformat.NotebookNode) -> None:
    shown = printed(notebook.cells[LOOK])
    assert shown.startswith("mercury · scripted/look · working on it… · attached @df, @arr\n")
    assert "@nope: there is no variable named nope in your kernel." in shown
    first = facts(notebook.cells[LOOK_FACTS])["first"]
    assert "Variables from the user's kernel, attached for @df, @arr:" in first
    assert "df: pandas.DataFrame · shape (3, 2)" in first
    assert "columns (2): month str, sales int64" in first


def test_inspect_variables_describes_and_never_calls_a_repr(
        notebook: nbformat.NotebookNode) -> None:
    listing = facts(notebook.cells[LOOK_FACTS])["listing"]
    lines = listing.splitlines()
    assert "df: pandas.DataFrame · shape (3, 2)" in lines
    assert "arr: numpy.ndarray · shape (3, 4) · dtype float64 = [[ 0. 1. 2. 3.] " \
           "[ 4. 5. 6. 7.] [ 8. 9. 10. 11.]]" in lines
    assert "settings: dict · len 2 = {'api_key': ***, 'region': 'eu'}" in lines
    assert "forever: __main__.Forever (not a known type: only its type is shown)" in lines
    assert "abcdefghij" not in listing
    assert not any(line.startswith(("np:", "pd:", "In:", "Out:", "registry:", "look:"))
                   for line in lines)  # modules, IPython's names and the agent's objects


def test_run_in_kernel_returns_output_display_and_traceback(
        notebook: nbformat.NotebookNode) -> None:
    found = facts(notebook.cells[BOTH_FACTS])
    assert found["inspected"].startswith("df: pandas.DataFrame · shape (3, 2)")
    ran = found["ran"]
    assert "stdout:\nrows 3" in ran
    assert "displays:\n- image/png 640×480" in ran
    assert "NameError: name 'undefined_name' is not defined" in ran
    assert found["columns"] == ["month", "sales", "double"]
    assert "Also: ran code in your kernel (1 run)" in found["banner"]
    both_cell = notebook.cells[BOTH]
    assert not any("image/png" in o.get("data", {}) for o in both_cell.outputs)
    assert "rows 3" not in printed(both_cell)  # kept for the model, not shown in the cell


def test_run_in_kernel_refuses_while_another_cell_runs(
        notebook: nbformat.NotebookNode) -> None:
    found = facts(notebook.cells[BUSY_FACTS])
    assert "another cell of this kernel is executing" in found["refused"]
    assert found["touched"] is False


def test_a_stop_ends_while_true_pass(notebook: nbformat.NotebookNode) -> None:
    found = facts(notebook.cells[SPIN_FACTS])
    assert found["status"] == "aborted"
    assert "Also: the code it was running in your kernel was stopped." in found["banner"]
    assert found["alive"] is False
    assert found["took"] is not None and found["took"] < 2.0
