"""The pure status view model: events folded in order, and the one-line status text."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

import pytest

from mercury_nb.agent.events import (
    AgentEvent,
    Notice,
    Pulse,
    StepStarted,
    TaskFinished,
    TaskStarted,
    TextDelta,
    ToolFinished,
    ToolProgress,
    ToolStarted,
)
from mercury_nb.contract.outcome import TaskOutcome, Usage
from mercury_nb.ui.status import (
    NOTICES_KEPT,
    TAIL_CHARS,
    StatusView,
    elapsed_s,
    fold,
    status_line,
    tool_detail,
    tool_label,
)


@dataclass(frozen=True)
class LaterKind:
    """An event class added after this view was written."""

    kind: ClassVar[str] = "later-kind"
    count: int


def outcome(status: str = "completed", steps: int = 3, **more: object) -> TaskOutcome:
    return TaskOutcome(task_id="t1", task="build", status=status, verdict="text-stop",  # type: ignore[arg-type]
                       answer="ok", banner="banner text", steps=steps, **more)  # type: ignore[arg-type]


SPENT = {"usage": {"gpt-x": Usage(prompt_tokens=12_000, completion_tokens=345,
                                  total_tokens=12_345)}, "cost_usd": 0.004}


def fold_all(timed: Sequence[tuple[float, AgentEvent]]) -> StatusView:
    view = StatusView()
    for now, event in timed:
        view = fold(view, event, now)
    return view


STARTED = (100.0, TaskStarted("t1", "build", "gpt-x", 75))


@pytest.mark.parametrize(
    ("timed", "now", "line"),
    [
        pytest.param([], 5.0, "working on it… · 0s", id="nothing-yet"),
        pytest.param([STARTED], 101.5, "gpt-x · working on it… · 1s", id="started-names-model"),
        pytest.param([STARTED, (101.0, StepStarted(1, 75, "gpt-x"))], 102.0,
                     "step 1/75 · thinking · 2s", id="step-without-tool-is-thinking"),
        pytest.param([STARTED, (101.0, StepStarted(3, 75, "gpt-x")),
                      (103.0, ToolStarted(3, "run_command", "pytest -q"))], 112.9,
                     "step 3/75 · run_command · 12s", id="running-tool"),
        pytest.param([STARTED, (101.0, StepStarted(3, 75, "gpt-x")),
                      (103.0, ToolStarted(3, "run_command", "pytest -q")),
                      (104.0, ToolFinished(3, "run_command", True, "exit 0"))], 105.0,
                     "step 3/75 · thinking · 5s", id="tool-done-back-to-thinking"),
        pytest.param([STARTED, (101.0, StepStarted(2, 0, "gpt-x"))], 101.0,
                     "step 2 · thinking · 1s", id="no-budget-known"),
        pytest.param([STARTED, (101.0, StepStarted(3, 75, "gpt-x")),
                      (110.0, TaskFinished(outcome("paused", 75)))], 500.0,
                     "paused · 75 steps · 10s", id="finished-freezes-elapsed"),
        pytest.param([STARTED, (101.0, TaskFinished(outcome("completed", 1)))], 101.0,
                     "completed · 1 step · 1s", id="one-step-singular"),
        pytest.param([STARTED, (101.0, TaskFinished(outcome("completed", 4, **SPENT)))], 112.0,
                     "completed · 4 steps · 12.3k tokens · ~$0.004 · 1s",
                     id="finished-with-tokens-and-cost"),
        pytest.param([STARTED, (101.0, TaskFinished(outcome(
            "paused", 4, usage=SPENT["usage"], unpriced=["gpt-x"])))], 101.0,
                     "paused · 4 steps · 12.3k tokens · cost unknown (no price known for gpt-x: "
                     "tokens only) · 1s", id="finished-with-an-unknown-price"),
        pytest.param([STARTED, (101.0, StepStarted(4, 75, "gpt-x", 8_100, 0.002, (), 63))],
                     103.0, "step 4/75 · thinking · 3s · 8.1k tokens · ~$0.002 · context 63%",
                     id="running-with-spend-and-context"),
        pytest.param([STARTED, (101.0, StepStarted(2, 75, "gpt-x", 0, None, (), 7))],
                     103.0, "step 2/75 · thinking · 3s · context 7%",
                     id="no-tokens-reported-yet"),
        pytest.param([STARTED, (101.0, StepStarted(4, 75, "gpt-x", 8_100, 0.002, (), 63)),
                      (102.0, Pulse("waiting for the model · 181 s · context 63%"))], 103.0,
                     "step 4/75 · waiting for the model · 181 s · context 63%",
                     id="the-pulse-names-the-context-once"),
        pytest.param([(100.0, ToolStarted(4, "edit_file", "a.py"))], 101.0,
                     "step 4 · edit_file · 1s", id="tool-before-any-step-event"),
        pytest.param([(100.0, TaskStarted("t1", "plot @sales", "gpt-x", 75,
                                          attached=("sales", "df")))], 101.0,
                     "gpt-x · working on it… · attached @sales, @df · 1s",
                     id="start-line-names-attached-variables"),
        pytest.param([STARTED, (101.0, StepStarted(3, 75, "gpt-x")),
                      (103.0, ToolStarted(3, "run_in_kernel", "run_in_kernel: df.sum()"))],
                     115.5, "step 3/75 · running in your kernel · 12 s",
                     id="kernel-code-pulse-counts-its-own-seconds"),
        pytest.param([STARTED, (101.0, StepStarted(3, 75, "gpt-x")),
                      (103.0, ToolStarted(3, "run_in_kernel", "run_in_kernel: x")),
                      (104.0, Pulse("Still working — running run_in_kernel x · 181 s"))],
                     300.0, "step 3/75 · running in your kernel · 197 s",
                     id="kernel-pulse-over-the-stall-pulse"),
        pytest.param([STARTED, (101.0, StepStarted(3, 75, "gpt-x")),
                      (103.0, ToolStarted(3, "run_cells", "run_cells: a.ipynb")),
                      (104.0, ToolProgress(3, "run_cells", "cell 1/12")),
                      (130.0, ToolProgress(3, "run_cells", "cell 7/12")),
                      (131.0, Pulse("Still working — running run_cells a.ipynb · 28 s"))],
                     137.5, "step 3/75 · cell 7/12 · 34 s",
                     id="cell-run-progress-with-the-call's-seconds"),
        pytest.param([STARTED, (101.0, StepStarted(3, 75, "gpt-x")),
                      (103.0, ToolStarted(3, "run_cells", "run_cells: a.ipynb")),
                      (104.0, ToolProgress(3, "run_cells", "cell 1/2")),
                      (105.0, ToolFinished(3, "run_cells", True, "run_cells: a.ipynb")),
                      (106.0, ToolStarted(3, "read_file", "read_file: a.py"))],
                     107.0, "step 3/75 · read_file · 7s",
                     id="progress-ends-with-its-call"),
        pytest.param([STARTED, (101.0, StepStarted(3, 75, "gpt-x")),
                      (103.0, ToolStarted(3, "read_file", "read_file: a.py")),
                      (104.0, ToolProgress(3, "run_cells", "cell 1/2"))],
                     107.0, "step 3/75 · read_file · 7s",
                     id="progress-of-another-call-is-not-shown"),
    ],
)
def test_status_line(timed: list[tuple[float, AgentEvent]], now: float, line: str) -> None:
    assert status_line(fold_all(timed), now) == line


def test_fold_tracks_tools_failures_and_notices() -> None:
    view = fold_all([
        STARTED,
        (101.0, StepStarted(1, 75, "gpt-x")),
        (101.1, ToolStarted(1, "create_file", "a.py")),
        (101.2, ToolFinished(1, "create_file", True, "a.py")),
        (101.3, ToolStarted(1, "run_command", "pytest")),
        (101.4, ToolFinished(1, "run_command", False, "exit 1")),
        *[(102.0 + i, Notice(f"notice {i}")) for i in range(NOTICES_KEPT + 2)],
    ])
    assert (view.task_id, view.model, view.max_steps) == ("t1", "gpt-x", 75)
    assert (view.tools_run, view.tool_failures, view.tool) == (2, 1, None)
    assert view.notices == tuple(f"notice {i}" for i in range(2, NOTICES_KEPT + 2))
    assert view.last_notice == f"notice {NOTICES_KEPT + 1}"
    assert not view.finished


def test_streamed_text_keeps_a_tail_and_a_new_step_clears_it() -> None:
    view = fold_all([STARTED, (101.0, StepStarted(1, 75, "m"))])
    for i in range(1000):  # 5000 characters, word by word
        view = fold(view, TextDelta(f"{i:04d} "), 102.0)
    assert len(view.tail) == TAIL_CHARS and view.tail_cut
    assert view.tail.endswith("0999 ")
    view = fold(view, StepStarted(2, 75, "m"), 103.0)
    assert view.tail == "" and not view.tail_cut


def test_streamed_text_is_shown_word_by_word_redacted_as_a_whole() -> None:
    view = fold_all([STARTED, (101.0, StepStarted(1, 75, "m"))])
    for piece in ("Here is sk-abcd", "efgh1234 and the", "n more"):
        view = fold(view, TextDelta(piece), 102.0)
        assert "abcd" not in view.tail  # never a part of the key
    assert view.tail == "Here is sk-*** and then "  # "more" waits for the end of its word
    view = fold(view, ToolStarted(1, "read_file", "read_file: a.txt"), 103.0)
    assert view.tail == "Here is sk-*** and then more"  # the reply is whole: all of it


def test_elapsed_counts_from_the_first_event_and_never_goes_negative() -> None:
    view = fold_all([(50.0, Notice("hello"))])
    assert view.started_at == 50.0
    assert elapsed_s(view, 53.7) == 3
    assert elapsed_s(view, 10.0) == 0
    assert elapsed_s(StatusView(), 99.0) == 0


def test_finish_keeps_the_outcome() -> None:
    done = outcome("aborted", 4)
    view = fold_all([STARTED, (104.0, TaskFinished(done))])
    assert view.finished and view.outcome is done and view.finished_at == 104.0


@pytest.mark.parametrize(
    ("name", "summary", "detail", "label"),
    [
        pytest.param("run_command", "run_command: pytest -q", "pytest -q", "run_command pytest -q",
                     id="summary-names-the-tool"),
        pytest.param("create_file", "a.py", "a.py", "create_file a.py", id="bare-summary"),
        pytest.param("list_dir", "list_dir", "", "list_dir", id="summary-is-the-name"),
        pytest.param("list_dir", "", "", "list_dir", id="no-summary"),
        pytest.param("edit_file", "edit_file:", "", "edit_file", id="name-colon-nothing"),
    ],
)
def test_tool_detail_and_label(name: str, summary: str, detail: str, label: str) -> None:
    assert (tool_detail(name, summary), tool_label(name, summary)) == (detail, label)


def test_an_event_the_view_has_nothing_for_ends_the_pulse_and_changes_nothing_else() -> None:
    pulsing = fold_all([(0.0, TaskStarted("t1", "x", "m", 9)), (1.0, StepStarted(1, 9, "m")),
                        (2.0, Pulse("waiting for the model · 6 s"))])
    after = fold(pulsing, LaterKind(3), 3.0)  # type: ignore[arg-type]
    assert after == replace(pulsing, pulse=None)
    assert status_line(after, 5.0) == "step 1/9 · thinking · 5s"
