"""The shipped demo models: offline ``scripted/`` models any front end can name, no key needed.

A demo is a fixed conversation, not a test fake: :class:`DemoModel` picks its next step from
the request itself (how many assistant turns it already holds), so every new task starts at
the first step, two tasks never share a position, and a task stopped and continued goes on
where its conversation stopped. :data:`DEMOS` is the whole set, by name; the model registry
falls back to it for a ``scripted/`` name nothing registered (a registered model of the same
name, such as a test's, wins).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from mercury_nb.transport.protocol import (
    FinishChunk,
    ModelRequest,
    StreamChunk,
    TextChunk,
    ToolCallChunk,
)

CHUNK_CHARS = 24
"""Text is streamed in pieces this long (a demo streams as a provider does)."""


@dataclass(frozen=True)
class DemoStep:
    """One reply: text, then tool calls (``(tool name, arguments)``), after ``delay_s``."""

    text: str = ""
    calls: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    delay_s: float = 0.0


@dataclass(eq=False)
class DemoModel:
    """A demo: ``steps`` in order, the step chosen by the assistant turns in the request
    (past the last step, the last one again)."""

    name: str
    description: str
    steps: tuple[DemoStep, ...] = field(repr=False)
    allow: tuple[str, ...] = ()
    """Allow rules a task on this demo gets: the demo's own exact commands, so it runs
    in the default ``edits`` mode where nobody can be asked (the panel, ``--wait``)."""

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        return self._play(request)

    def step_for(self, request: ModelRequest) -> tuple[int, DemoStep]:
        done = sum(1 for message in request.messages if message.get("role") == "assistant")
        number = min(done, len(self.steps) - 1)
        return number, self.steps[number]

    async def _play(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        number, step = self.step_for(request)
        if step.delay_s > 0:
            await asyncio.sleep(step.delay_s)  # a Stop lands here: the task cancels it
        for start in range(0, len(step.text), CHUNK_CHARS):
            yield TextChunk(step.text[start:start + CHUNK_CHARS])
        for index, (tool, arguments) in enumerate(step.calls):
            yield ToolCallChunk(index, f"call_{number}_{index}", tool, json.dumps(arguments))
        yield FinishChunk("tool_calls" if step.calls else "stop")


GREET = 'def greet(name):\n    return f"Hello, {name}!"\n'
TEST = 'from greet import greet\n\n\ndef test_greet():\n    assert greet("Ada") == "Hello, Ada!"\n'


def _greet_steps(delay_s: float) -> tuple[DemoStep, ...]:
    """The quickstart's conversation: write greet() and its test, claim done without a
    check (the gate makes it verify), run the test, report."""
    return (
        DemoStep(calls=(("create_file", {"path": "greet.py", "content": GREET}),
                        ("create_file", {"path": "test_greet.py", "content": TEST})),
                 delay_s=delay_s),
        DemoStep(text="Added greet() and its test.", delay_s=delay_s),
        DemoStep(calls=(("run_command", {"command": "python -m pytest -q test_greet.py"}),),
                 delay_s=delay_s),
        DemoStep(text="greet() is in greet.py and its test passes.", delay_s=delay_s),
    )


PLOT_BY_MONTH = (
    'by_month = sales.groupby("month", sort=False)["amount"].sum().to_frame()\n'
    'by_month.style.bar(color="#4c78a8").format("{:,.0f}")'
)
"""The cell the data tutorial's demo inserts: sales by month as bars (no plotting library)."""


def _sales_steps() -> tuple[DemoStep, ...]:
    """The data tutorial's conversation (notebooks/07): insert the plot cell below the cell
    that loads ``sales`` in analysis.ipynb, then report; the gate runs the notebook."""
    return (
        DemoStep(calls=(("insert_notebook_cell", {
            "path": "analysis.ipynb", "index": 1, "cell_type": "code",
            "source": PLOT_BY_MONTH, "after_cell_id": "load-sales"}),)),
        DemoStep(text="Added a cell below the one that loads sales: it plots sales by month."),
    )


GREET_ALLOW = ("python -m pytest -q test_greet.py",)
"""The one command the greet demos run."""

WALKTHROUGH_DELAY_S = 3.0
"""How long ``scripted/walkthrough`` thinks before each step: long enough to watch and Stop."""

DEMOS: Mapping[str, DemoModel] = {
    demo.name: demo
    for demo in (
        DemoModel("scripted/quickstart",
                  "demo, offline: writes greet() and its test, runs it (a few seconds)",
                  _greet_steps(0.0), GREET_ALLOW),
        DemoModel("scripted/walkthrough",
                  f"demo, offline: the same task slowly ({WALKTHROUGH_DELAY_S:g} s a step), "
                  "to watch, Stop and Continue",
                  _greet_steps(WALKTHROUGH_DELAY_S), GREET_ALLOW),
        DemoModel("scripted/sales",
                  "demo, offline: adds a cell that plots sales by month to analysis.ipynb "
                  "(the data tutorial)",
                  _sales_steps()),
    )
}
"""The shipped demos by name: what the panel's picker marks as demos, what the CLI and a
cell can name (``--model scripted/quickstart``)."""


def demo_model(name: str) -> DemoModel | None:
    """The shipped demo called ``name`` (None: not a demo)."""
    return DEMOS.get(name)
