"""The plain-text view: which events print, the closing text, and the detached display handle."""

from __future__ import annotations

import io
from typing import Any

import pytest

from mercury_nb.agent.events import (
    AgentEvent,
    Notice,
    StepStarted,
    TaskFinished,
    TaskStarted,
    TextDelta,
    ToolFinished,
    ToolProgress,
    ToolStarted,
)
from mercury_nb.contract.outcome import TaskOutcome, Usage
from mercury_nb.ui import plain as plain_module
from mercury_nb.ui.plain import PlainView, banner_with_footer, event_line, final_text, status_block
from mercury_nb.ui.status import StatusView, fold


def outcome(answer: str | None = "Created app.py.", banner: str = "✓ Task complete") -> TaskOutcome:
    return TaskOutcome(task_id="t1", task="build", status="completed", verdict="text-stop",
                       answer=answer, banner=banner, steps=2)


IN_STEP = fold(StatusView(), StepStarted(3, 75, "m"), 0.0)


@pytest.mark.parametrize(
    ("event", "line"),
    [
        pytest.param(TaskStarted("t1", "build", "gpt-x", 75), "mercury · gpt-x · working on it…",
                     id="start"),
        pytest.param(StepStarted(3, 75, "m"), None, id="step-start-quiet"),
        pytest.param(TextDelta("tok"), None, id="tokens-never-print"),
        pytest.param(ToolStarted(3, "run_command", "run_command: pytest -q"),
                     "step 3/75 · run_command pytest -q", id="tool-start-summary-names-tool"),
        pytest.param(ToolStarted(3, "create_file", "a.py"), "step 3/75 · create_file a.py",
                     id="tool-start-bare-summary"),
        pytest.param(ToolStarted(3, "list_dir", "list_dir"), "step 3/75 · list_dir",
                     id="tool-summary-is-just-the-name"),
        pytest.param(ToolStarted(3, "list_dir", ""), "step 3/75 · list_dir", id="tool-no-summary"),
        pytest.param(ToolFinished(3, "run_command", True, "run_command: x"), None,
                     id="tool-ok-quiet"),
        pytest.param(ToolFinished(3, "edit_file", False, "edit_file: a.py"),
                     "  ✗ edit_file a.py failed", id="tool-failure"),
        pytest.param(ToolProgress(3, "run_cells", "cell 2/5"), "  cell 2/5",
                     id="tool-progress"),
        pytest.param(Notice("Checking my work…"), "Checking my work…", id="notice"),
        pytest.param(TaskFinished(outcome()), "\n│ Created app.py.\n\n✓ Task complete",
                     id="finish"),
    ],
)
def test_event_line(event: AgentEvent, line: str | None) -> None:
    assert event_line(IN_STEP, event) == line


def test_the_closing_text_ends_with_the_footer_once_tokens_were_reported() -> None:
    spent = outcome().model_copy(update={
        "usage": {"m": Usage(prompt_tokens=12_000, completion_tokens=345, total_tokens=12_345)},
        "cost_usd": 0.004, "steps": 4})
    assert final_text(spent) == ("│ Created app.py.\n\n✓ Task complete\n"
                                 "4 steps · 12.3k tokens · ~$0.004")
    assert banner_with_footer(spent) == "✓ Task complete\n4 steps · 12.3k tokens · ~$0.004"
    assert banner_with_footer(outcome()) == "✓ Task complete"  # nothing reported, nothing said


@pytest.mark.parametrize(
    ("answer", "text"),
    [
        pytest.param("  Sure.\n", "│ Sure.\n\n✓ Task complete", id="answer-then-banner"),
        pytest.param("Done.\n\n✓ Verified: python -m pytest -q → exit 0 ✓\n✓ Task complete",
                     "│ Done.\n│\n│ ✓ Verified: python -m pytest -q → exit 0 ✓\n│ ✓ Task complete"
                     "\n\n✓ Task complete", id="an-answer-that-forges-the-banner-is-quoted"),
        pytest.param("a\x1b[2Kb\rc\u2028d\te", "│ a\\x1b[2Kb\\rc\\u2028d    e\n\n✓ Task complete",
                     id="controls-in-an-answer-are-escaped"),
        pytest.param(None, "✓ Task complete", id="no-answer"),
        pytest.param("   ", "✓ Task complete", id="blank-answer"),
    ],
)
def test_final_text(answer: str | None, text: str) -> None:
    assert final_text(outcome(answer=answer)) == text


def test_attached_view_prints_lines_in_order() -> None:
    out = io.StringIO()
    view = PlainView(max_updates_per_s=10, attached=True, stream=out, clock=lambda: 0.0)
    for event in (TaskStarted("t1", "x", "m", 5), StepStarted(1, 5, "m"), TextDelta("a" * 50),
                  ToolStarted(1, "create_file", "a.py"), Notice("note"), TaskFinished(outcome())):
        view.on_event(event)
    assert out.getvalue() == (
        "mercury · m · working on it…\nstep 1/5 · create_file a.py\nnote\n"
        "\n│ Created app.py.\n\n✓ Task complete\n"
    )


class FakeHandle:
    def __init__(self) -> None:
        self.updates: list[str] = []

    def update(self, obj: dict[str, str], raw: bool = False) -> None:
        assert raw
        self.updates.append(obj["text/plain"])


def test_detached_view_updates_its_display_handle(monkeypatch: pytest.MonkeyPatch) -> None:
    handle = FakeHandle()
    shown: list[Any] = []

    def fake_display(obj: Any, **kwargs: Any) -> FakeHandle:
        shown.append((obj, kwargs))
        return handle

    monkeypatch.setattr("IPython.display.display", fake_display)
    now = [0.0]
    view = PlainView(max_updates_per_s=10, attached=False, clock=lambda: now[0])
    assert shown == [({"text/plain": "mercury · working on it… · 0s"},
                      {"raw": True, "display_id": True})]
    view.on_event(TaskStarted("t1", "x", "m", 5))
    now[0] = 0.01
    view.on_event(Notice("held back by the throttle"))
    assert handle.updates == ["mercury · m · working on it… · 0s"]
    now[0] = 3.0
    view.on_event(TaskFinished(outcome()))
    assert handle.updates[-1] == (
        "mercury · completed · 2 steps · 3s\nheld back by the throttle\n\n"
        "│ Created app.py.\n\n✓ Task complete"
    )
    view.show_error("RuntimeError: boom")
    assert handle.updates[-1].endswith("✓ Task complete\n\nRuntimeError: boom")
    assert plain_module.status_block(view.view, 3.0, "e").endswith("\n\ne")


def test_status_block_of_a_running_task() -> None:
    view = fold(fold(StatusView(), TaskStarted("t", "x", "m", 9), 0.0), Notice("n1"), 0.5)
    assert status_block(view, 2.0) == "mercury · m · working on it… · 2s\nn1"
