"""The stall watchdog's pulse in every view: the status model, plain text and the widget."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from mercury_nb.agent.events import (
    AgentEvent,
    Notice,
    Pulse,
    StepStarted,
    TaskStarted,
    TextDelta,
    ToolFinished,
    ToolStarted,
)
from mercury_nb.ui.plain import event_line
from mercury_nb.ui.status import StatusView, fold, status_line
from mercury_nb.ui.widgets import status_html

RUNNING = "running pytest -q · 190 s"
SILENT = "waiting for the model · 180 s"
STEP = [TaskStarted("t1", "build", "gpt-x", 75), StepStarted(3, 75, "gpt-x")]
IN_TOOL = [*STEP, ToolStarted(3, "run_command", "run_command: pytest -q")]


def fold_all(events: Sequence[AgentEvent], now: float = 100.0) -> StatusView:
    view = StatusView()
    for event in events:
        view = fold(view, event, now)
    return view


@pytest.mark.parametrize(
    ("events", "line"),
    [
        pytest.param([*STEP, Pulse(SILENT)], f"step 3/75 · {SILENT}", id="silent-model"),
        pytest.param([*IN_TOOL, Pulse(RUNNING)], f"step 3/75 · {RUNNING}", id="command"),
        pytest.param(
            [*STEP, Pulse(SILENT), Notice("⚠ switching")], f"step 3/75 · {SILENT}",
            id="a-notice-keeps-it",
        ),
        pytest.param([*STEP, Pulse(SILENT), TextDelta("Hi")], "step 3/75 · thinking · 12s",
                     id="a-chunk-ends-it"),
        pytest.param(
            [*IN_TOOL, Pulse(RUNNING), ToolFinished(3, "run_command", True, "run_command: x")],
            "step 3/75 · thinking · 12s", id="the-tool-finishing-ends-it",
        ),
    ],
)
def test_status_line_shows_the_pulse_until_progress(
    events: list[AgentEvent], line: str
) -> None:
    view = fold_all(events)
    assert status_line(view, 112.0) == line


def test_plain_text_prints_the_pulse_line() -> None:
    view = fold_all([*STEP, Pulse(SILENT)])
    assert event_line(view, Pulse(SILENT)) == SILENT


def test_widget_status_shows_the_pulse_instead_of_the_tool_detail() -> None:
    view = fold_all([*IN_TOOL, Pulse(RUNNING)])
    rendered = status_html(view, 112.0)
    assert "running pytest -q · 190 s" in rendered
    assert rendered.count("pytest -q") == 1


def test_a_silent_model_reads_waiting_for_the_model_in_every_view() -> None:
    """The watchdog's pulse while the model says nothing: "waiting for the model · N s" in
    the status line, the widget and the plain text, and its seconds keep growing."""
    from mercury_nb.contract.config import MercuryConfig
    from mercury_nb.contract.recovery import stall_watchdog as wd

    state = wd.start_watchdog(0.0)  # a model request begins: nothing heard yet
    state, decision = wd.step_watchdog(state, wd.Tick(8_000), MercuryConfig(stall_soft_ms=8_000))
    assert isinstance(decision, wd.PulseDue)
    pulse = Pulse(decision.text, decision.activity, decision.silent_s, watch=state)
    assert pulse.text == "waiting for the model · 8 s"
    view = fold_all([*STEP, pulse], now=8.0)
    assert status_line(view, 8.0) == "step 3/75 · waiting for the model · 8 s"
    assert status_line(view, 12.0) == "step 3/75 · waiting for the model · 12 s"
    assert "waiting for the model · 12 s" in status_html(view, 12.0)
    assert event_line(view, pulse) == "waiting for the model · 8 s"
    assert "silent" not in status_line(view, 12.0) and "Still working" not in pulse.text
