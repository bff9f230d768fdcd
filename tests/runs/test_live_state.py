"""The one fold of live state: what a running task is doing now, from its typed events."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from mercury_nb.runs.events import EventKind, RunEvent
from mercury_nb.runs.live_state import LiveState, fold_live, live_of

BUSY = LiveState(step=2, tool="run_command", started=100.0, at=105.0)


def event(kind: EventKind, at: float, **data: Any) -> RunEvent:
    return RunEvent(1, "t", kind, at, data)


@pytest.mark.parametrize(
    ("before", "seen", "after"),
    [
        pytest.param(LiveState(), event("task-started", 100.0, models=["m"]),
                     LiveState(started=100.0, at=100.0), id="a-start-starts-the-clock"),
        pytest.param(BUSY, event("resume", 200.0, models=["m"]),
                     LiveState(2, "run_command", 200.0, 200.0), id="a-resume-restarts-it"),
        pytest.param(BUSY, event("step-started", 110.0, step=3, max_steps=9, model="m"),
                     LiveState(3, None, 100.0, 110.0), id="a-step-clears-the-tool"),
        pytest.param(BUSY, event("tool-started", 110.0, step=2, name="read_file", summary=""),
                     LiveState(2, "read_file", 100.0, 110.0), id="a-tool-runs"),
        pytest.param(BUSY, event("tool-started", 110.0, step=None, name=7, summary=""),
                     LiveState(2, None, 100.0, 110.0), id="odd-fields-keep-the-step"),
        pytest.param(BUSY, event("tool-finished", 110.0, step=2, name="run_command", ok=True,
                                 summary=""),
                     LiveState(2, None, 100.0, 110.0), id="a-finished-tool-clears-it"),
        pytest.param(BUSY, event("pulse", 120.0, text="…", activity="a", silent_s=12),
                     LiveState(2, "run_command", 100.0, 108.0), id="a-pulse-dates-the-silence"),
        pytest.param(BUSY, event("pulse", 120.0, text="…", silent_s=True),
                     LiveState(2, "run_command", 100.0, 120.0), id="a-bool-is-no-silence"),
        pytest.param(BUSY, event("text-delta", 111.0, text="Reading "),
                     LiveState(2, "run_command", 100.0, 111.0, "Reading "),
                     id="streamed-text-adds-up"),
        pytest.param(LiveState(2, None, 100.0, 105.0, "old words"),
                     event("step-started", 110.0, step=3, max_steps=9, model="m"),
                     LiveState(3, None, 100.0, 110.0), id="a-step-clears-the-text"),
        pytest.param(BUSY, event("tool-progress", 112.0, step=2, name="run_command",
                                 text="cell 3/7"),
                     LiveState(2, "run_command", 100.0, 112.0, progress="cell 3/7"),
                     id="the-running-tools-progress"),
        pytest.param(BUSY, event("tool-progress", 112.0, step=2, name="run_cells",
                                 text="cell 3/7"),
                     LiveState(2, "run_command", 100.0, 112.0), id="another-tools-is-stale"),
        pytest.param(replace(BUSY, progress="cell 3/7"),
                     event("tool-finished", 113.0, step=2, name="run_command", ok=True,
                           summary=""),
                     LiveState(2, None, 100.0, 113.0), id="its-end-clears-its-progress"),
        pytest.param(BUSY, event("compaction", 130.0, text="⚠ [compacted]"),
                     LiveState(2, "run_command", 100.0, 130.0), id="any-event-is-a-sign-of-life"),
    ],
)
def test_fold_live(before: LiveState, seen: RunEvent, after: LiveState) -> None:
    assert fold_live(before, seen) == after


def test_live_of_folds_in_order_and_says_it_as_json() -> None:
    events = [event("task-started", 100.0), event("step-started", 101.0, step=3),
              event("tool-started", 102.0, step=3, name="run_command"),
              event("pulse", 110.0, silent_s=6)]
    assert live_of(events).to_json() == {"step": 3, "tool": "run_command", "progress": "",
                                         "started": 100.0, "at": 104.0, "text": "",
                                         "approval": None}
    assert live_of(events[2:], live_of(events[:2])) == live_of(events)
    assert live_of([]) == LiveState()


ASK = {"step": 2, "tool": "run_command", "what": 'run "pip install x"',
       "command": "pip install x", "suggested_rule": "pip install*", "detail": "",
       "request_id": 1}
PENDING = {"request": 1, "tool": "run_command", "what": 'run "pip install x"',
           "command": "pip install x", "detail": "", "suggested_rule": "pip install*",
           "asked_in": None}


def test_a_permission_ask_is_pending_until_its_answer_under_the_number_it_carries() -> None:
    asked = live_of([event("task-started", 100.0), event("permission-asked", 101.0, **ASK)])
    assert asked.approval == PENDING and asked.to_json()["approval"] == PENDING
    answered = fold_live(asked, event("permission-answered", 102.0, step=2, tool="run_command",
                                      what=ASK["what"], answer="allow-once", rule=None, why=""))
    assert answered.approval is None
    again = fold_live(answered, event("permission-asked", 103.0, **{**ASK, "request_id": 7}))
    assert again.approval == {**PENDING, "request": 7}  # the event's number, not a count
    assert fold_live(again, event("resume", 200.0)).approval is None


@pytest.mark.parametrize("number", [None, "2", True, 2.0])
def test_an_ask_without_a_whole_number_is_pending_as_0_which_no_answer_names(
        number: object) -> None:
    data = {**ASK, "request_id": number}
    assert live_of([event("permission-asked", 1.0, **data)]).approval == {**PENDING,
                                                                          "request": 0}


def interface_fields(source: str, name: str) -> list[str]:
    """The field names of TypeScript interface ``name`` in ``source``."""
    found = re.search(rf"export interface {name} \{{(.*?)\n\}}", source, re.S)
    assert found is not None, f"no interface {name}"
    return re.findall(r"^\s+(\w+)\??:", found.group(1), re.M)


def test_the_panels_approval_type_has_the_folds_fields() -> None:
    """labextension/src/api.ts IApproval and ILive.approval say what the fold sends."""
    source = (Path(__file__).resolve().parents[2] / "labextension" / "src" / "api.ts"
              ).read_text(encoding="utf-8")
    pending = live_of([event("permission-asked", 1.0, **ASK)]).approval
    assert pending is not None
    assert sorted(interface_fields(source, "IApproval")) == sorted(pending)
    assert "approval" in interface_fields(source, "ILive")
    assert set(LiveState().to_json()) - {"approval"} <= set(interface_fields(source, "ILive"))
