"""Events name themselves: each class's kind is one of the vocabulary's, and its recorded
fields are its own."""

from __future__ import annotations

import typing

import pytest

from mercury_nb.agent import events as ev
from mercury_nb.contract.recovery.stall_watchdog import WatchdogState
from mercury_nb.contract.vocabulary import (
    EVENT_KINDS,
    PROGRESS_KINDS,
    STREAMED_KINDS,
    NoticeKind,
)

CLASSES = typing.get_args(ev.AgentEvent)


@pytest.mark.parametrize("cls", CLASSES, ids=[cls.__name__ for cls in CLASSES])
def test_every_event_class_names_a_kind_of_the_vocabulary(cls: type) -> None:
    assert cls.kind in EVENT_KINDS  # type: ignore[attr-defined]


def test_no_two_classes_share_a_kind_and_notices_have_their_own() -> None:
    kinds = [cls.kind for cls in CLASSES]  # type: ignore[attr-defined]
    assert len(set(kinds)) == len(kinds)
    notice_kinds = set(typing.get_args(NoticeKind))
    assert notice_kinds <= EVENT_KINDS
    assert not notice_kinds & (set(kinds) - {"notice"})
    assert PROGRESS_KINDS <= EVENT_KINDS and STREAMED_KINDS <= EVENT_KINDS


@pytest.mark.parametrize(
    ("event", "fields"),
    [
        pytest.param(ev.StepStarted(2, 9, "m"), {"step": 2, "max_steps": 9, "model": "m"},
                     id="step"),
        pytest.param(ev.ToolStarted(2, "run_command", "run_command: ls", "ls"),
                     {"step": 2, "name": "run_command", "summary": "run_command: ls",
                      "command": "ls"}, id="tool"),
        pytest.param(ev.Notice("⚠ switching", "provider-switch"), {"text": "⚠ switching"},
                     id="a-notice's-kind-is-its-column"),
        pytest.param(ev.Pulse("Still working", "the model", 6, None,
                              WatchdogState(window_start_ms=0.0)),
                     {"text": "Still working", "activity": "the model", "silent_s": 6,
                      "command": None}, id="a-pulse's-clock-stays-live"),
    ],
)
def test_recorded_fields(event: ev.AgentEvent, fields: dict[str, object]) -> None:
    assert ev.recorded_fields(event) == fields
