"""Events name themselves: the kinds are the classes' own (one each, notices aside), and an
event's recorded fields are its own."""

from __future__ import annotations

import typing

import pytest

from mercury_nb.agent import events as ev
from mercury_nb.contract.recovery.stall_watchdog import WatchdogState
from mercury_nb.contract.vocabulary import NoticeKind

CLASSES = typing.get_args(ev.AgentEvent)


def test_the_kinds_are_the_classes_own_and_the_notices() -> None:
    kinds = [cls.kind for cls in CLASSES]  # type: ignore[attr-defined]
    notice_kinds = set(typing.get_args(NoticeKind))
    assert len(set(kinds)) == len(kinds)
    assert not notice_kinds & (set(kinds) - {"notice"})
    assert set(kinds) | notice_kinds == ev.AGENT_EVENT_KINDS
    assert ev.PROGRESS_KINDS <= ev.AGENT_EVENT_KINDS
    assert ev.STREAMED_KINDS <= ev.AGENT_EVENT_KINDS


@pytest.mark.parametrize(
    ("event", "fields"),
    [
        pytest.param(ev.StepStarted(2, 9, "m"), {"step": 2, "max_steps": 9, "model": "m",
                                                 "tokens": 0, "cost_usd": None,
                                                 "context": None}, id="step"),
        pytest.param(ev.StepStarted(2, 9, "m", 12_345, 0.004, ("x",), 63),
                     {"step": 2, "max_steps": 9, "model": "m", "tokens": 12_345,
                      "cost_usd": 0.004, "context": 63}, id="step-with-spend"),
        pytest.param(ev.ToolStarted(2, "run_command", "run_command: ls", "ls"),
                     {"step": 2, "name": "run_command", "summary": "run_command: ls",
                      "command": "ls"}, id="tool"),
        pytest.param(ev.Notice("⚠ switching", "provider-switch"), {"text": "⚠ switching"},
                     id="a-notice's-kind-is-its-column"),
        pytest.param(ev.Pulse("Still working", "the model", 6, None,
                              WatchdogState(window_start_ms=0.0)),
                     {"text": "Still working", "activity": "the model", "silent_s": 6,
                      "command": None, "context": None}, id="a-pulse's-clock-stays-live"),
    ],
)
def test_recorded_fields(event: ev.AgentEvent, fields: dict[str, object]) -> None:
    assert ev.recorded_fields(event) == fields
