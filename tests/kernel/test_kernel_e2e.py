"""``%%mercury`` in a real Jupyter kernel, executed headless by nbclient (widget and text modes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.kernel

SETUP = '''
import asyncio, os, shlex, sys
from mercury_nb.runs import registry
from mercury_nb.testing import ScriptedModel, Turn, call, register_scripted_model

updates = []  # every in-place display update the kernel sends to the front end (text mode)
_publish = get_ipython().display_pub.publish
def _recording(data, *args, **kwargs):
    if kwargs.get("update"):
        updates.append(data.get("text/plain", ""))
    return _publish(data, *args, **kwargs)
get_ipython().display_pub.publish = _recording

class Gated(ScriptedModel):
    """Holds model call number `gate_at` until `gate` is set; `entered` tells it got there."""
    def __init__(self, turns, name, gate_at):
        super().__init__(turns, name=name)
        self.gate_at, self.calls = gate_at, 0
        self.gate, self.entered = asyncio.Event(), asyncio.Event()
    def stream(self, request):
        return self._gated(request, self.calls)
    async def _gated(self, request, number):
        self.calls += 1
        if number == self.gate_at:
            self.entered.set()
            await self.gate.wait()
        async for chunk in ScriptedModel.stream(self, request):
            yield chunk

def verified(test_file):
    check = f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider {test_file}"
    return [
        Turn(tool_calls=(call("create_file", path=test_file,
                              content="def test_ok():\\n    assert True\\n"),)),
        Turn(tool_calls=(call("run_command", command=check),)),
        Turn(text=f"Created {test_file} <script>alert(1)</script> and it passes."),
    ]

register_scripted_model("scripted/wait", verified("test_wait.py"))
bg = register_scripted_model("scripted/bg", Gated(verified("test_bg.py"), "scripted/bg", 0))
stop = register_scripted_model("scripted/stop", Gated(verified("test_stop.py"), "scripted/stop", 1))
'''

CELLS = [
    "%load_ext mercury_nb",
    SETUP,
    "%%mercury --wait --permissions auto --model scripted/wait\nCreate a passing test.",
    "print(registry.latest().result.banner)",
    "%%mercury --permissions auto --model scripted/bg\nCreate a passing test in the background.",
    (
        "bg_record = registry.latest()\n"
        "print('returned at once:', not bg_record.task.done(), not os.path.exists('test_bg.py'))\n"
        "await bg.entered.wait()\n"
        "bg.gate.set()\n"
        "bg_outcome = await bg_record.task\n"
        "print(bg_outcome.status, os.path.exists('test_bg.py'))"
    ),
    "print(bg_outcome.banner)",
    "%%mercury --permissions auto --model scripted/stop\nCreate a test, then get stopped.",
    (
        "stop_record = registry.latest()\n"
        "await stop.entered.wait()\n"
        "STOP\n"
        "stop_outcome = await stop_record.task\n"
        "print(stop_outcome.status, os.path.exists('test_stop.py'))"
    ),
    "import json\nprint(json.dumps(FACTS))",
]
WAIT, WAIT_BANNER, BG, BG_CHECK, BG_BANNER, STOP_CELL, STOP_CHECK, FACTS = range(2, 10)

WIDGET_FACTS = (
    "{'bg_widget': bg_record.views[0].box.model_id,"
    " 'bg_banner': bg_record.views[0].banner.value,"
    " 'stop_widget': stop_record.views[0].box.model_id,"
    " 'stop_banner': stop_record.views[0].banner.value}"
)
TEXT_FACTS = (
    "{'bg_text':"
    " __import__('mercury_nb.ui.plain').ui.plain.status_block(bg_record.views[0].view, 0),"
    " 'bg_updates': updates}"
)


def run_notebook(workdir: Path, stop_line: str, facts: str) -> nbformat.NotebookNode:
    sources = [src.replace("STOP", stop_line).replace("FACTS", facts) for src in CELLS]
    cells = [nbformat.v4.new_code_cell(src) for src in sources]
    nb = nbformat.v4.new_notebook(cells=cells)
    client = NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(workdir)}})
    client.execute()
    return nb


def texts(cell: Any, mime: str = "text/plain") -> list[str]:
    found = []
    for output in cell.outputs:
        if output.output_type == "stream":
            found.append(output.text)
        elif mime in output.get("data", {}):
            found.append(output.data[mime])
    return found


def printed(cell: Any) -> str:
    return "".join(o.text for o in cell.outputs if o.output_type == "stream")


def facts_of(nb: nbformat.NotebookNode) -> dict[str, Any]:
    facts: dict[str, Any] = json.loads(printed(nb.cells[FACTS]))
    return facts


def widget_id_shown_in(cell: Any) -> str:
    (model_id,) = [o.data["application/vnd.jupyter.widget-view+json"]["model_id"]
                   for o in cell.outputs
                   if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    return str(model_id)


def test_widget_mode_in_a_real_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MERCURY_PLAIN", raising=False)
    nb = run_notebook(tmp_path, "stop_record.views[0].stop_button.click()", WIDGET_FACTS)
    cells, facts = nb.cells, facts_of(nb)

    # --wait: the file exists and the banner is recorded as the cell's text output
    assert (tmp_path / "test_wait.py").is_file()
    banner = printed(cells[WAIT_BANNER]).strip()
    assert banner.startswith("✓ Task complete")
    wait_texts = texts(cells[WAIT])
    assert any(text.endswith(banner) for text in wait_texts), wait_texts
    html = "".join(texts(cells[WAIT], "text/html"))
    assert "&lt;script&gt;" in html and "<script" not in html

    # background: the cell returned at once and the task finished on the loop later;
    # its ending went into the widget displayed by ITS cell, not into the cell that ran later
    assert printed(cells[BG_CHECK]) == "returned at once: True True\ncompleted True\n"
    bg_banner_first_line = printed(cells[BG_BANNER]).strip().splitlines()[0]
    assert facts["bg_widget"] == widget_id_shown_in(cells[BG])
    assert bg_banner_first_line in facts["bg_banner"] and "test_bg.py" in facts["bg_banner"]
    assert all("Task complete" not in text for text in texts(cells[BG_CHECK]))

    # Stop button -> cancel -> aborted, files kept, shown in the stopped cell's widget
    assert printed(cells[STOP_CHECK]) == "aborted True\n"
    assert facts["stop_widget"] == widget_id_shown_in(cells[STOP_CELL])
    assert "mercury-aborted" in facts["stop_banner"] and "test_stop.py" in facts["stop_banner"]


def test_text_mode_in_a_real_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MERCURY_PLAIN", "1")  # inherited by the kernel
    nb = run_notebook(tmp_path, "stop_record.stop()", TEXT_FACTS)
    cells, facts = nb.cells, facts_of(nb)

    wait_out = printed(cells[WAIT])
    banner = printed(cells[WAIT_BANNER]).strip()
    assert wait_out.startswith("mercury · scripted/wait · working on it…\n")
    assert "step 1/75 · create_file test_wait.py\n" in wait_out
    assert wait_out.endswith(banner + "\n")
    assert all(o.output_type == "stream" for o in cells[WAIT].outputs)

    # background: a display handle shown by the magic's cell carries the status; later
    # cells get none of the task's output
    assert printed(cells[BG_CHECK]) == "returned at once: True True\ncompleted True\n"
    bg_banner = printed(cells[BG_BANNER]).strip()
    (shown,) = [o.data["text/plain"] for o in cells[BG].outputs if o.output_type == "display_data"]
    assert shown.startswith("mercury · scripted/bg · working on it… · ")  # the same start line
    assert facts["bg_text"].endswith(bg_banner)
    # the magic's display was updated in place with the ending (the banner names test_bg.py)
    assert any(text.endswith(bg_banner) for text in facts["bg_updates"])
    assert bg_banner not in printed(cells[BG_CHECK])

    assert printed(cells[STOP_CHECK]) == "aborted True\n"
