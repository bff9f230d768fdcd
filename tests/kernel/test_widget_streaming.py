"""The model's text streams into the cell's widget while the task runs (a real kernel)."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.kernel

ANSWER = "Reading the notes first, then the summary: all three items are done. "

SETUP = f'''
import asyncio, json, time
from mercury_nb.runs import registry
from mercury_nb.testing import ScriptedModel, Turn, register_scripted_model
from mercury_nb.transport.protocol import TextChunk

class HeldMidReply(ScriptedModel):
    """Streams `before` text chunks, then holds the rest until `gate` is set."""
    def __init__(self, turns, name, before):
        super().__init__(turns, name=name)
        self.before, self.gate, self.entered = before, asyncio.Event(), asyncio.Event()
    async def stream(self, request):
        seen = 0
        async for chunk in ScriptedModel.stream(self, request):
            yield chunk
            seen += isinstance(chunk, TextChunk)
            if seen == self.before and not self.gate.is_set():
                self.entered.set()
                await self.gate.wait()

model = register_scripted_model("scripted/stream-widget", HeldMidReply(
    [Turn(text={ANSWER!r}, chunk_size=6)], "scripted/stream-widget", before=4))

async def until(condition, what, deadline_s=20.0):
    deadline = time.monotonic() + deadline_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {{what}}"
        await asyncio.sleep(0.02)
'''

CHECK = '''
record = registry.latest()
view = record.views[0]
await model.entered.wait()  # the model is held mid-reply: the task cannot have ended
await until(lambda: "Reading the notes" in view.tail.value, "the streamed text")
during = {"tail": view.tail.value, "done": record.task.done(), "banner": view.banner.value,
          "status": view.status.value, "shown": view.tail.layout.display}
model.gate.set()
outcome = await record.task
after = {"tail": view.tail.value, "banner": view.banner.value, "status": outcome.status,
         "shown": view.tail.layout.display}
print(json.dumps({"during": during, "after": after}))
'''


def test_the_models_text_streams_into_the_widget_before_the_end(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MERCURY_PLAIN", raising=False)
    monkeypatch.setenv("MERCURY_HOME", str(tmp_path / "home"))
    cells = ["%load_ext mercury_nb", SETUP,
             "%%mercury --model scripted/stream-widget\nSummarize the notes.", CHECK]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in cells])
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    printed = "".join(o.text for o in nb.cells[3].outputs if o.output_type == "stream")
    facts = json.loads(printed)
    during, after = facts["during"], facts["after"]
    # while the model is held mid-reply: its words so far, in the live box, and no verdict
    assert not during["done"] and during["banner"] == ""
    assert "Reading the notes" in during["tail"] and "summary" not in during["tail"]
    assert "mercury-live-text" in during["tail"] and during["shown"] is None
    assert "step 1" in during["status"]
    # at the end the final answer replaces the live text
    assert after["status"] == "completed"
    assert after["tail"] == "" and after["shown"] == "none"
    assert "all three items are done" in after["banner"]
