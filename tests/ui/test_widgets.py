"""The ipywidgets view: everything escaped, previews collapsible, updates throttled, Stop wired."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mercury_nb.agent.events import (
    Notice,
    StepStarted,
    TaskFinished,
    TaskStarted,
    TextDelta,
    ToolStarted,
)
from mercury_nb.contract.outcome import FileChange, TaskOutcome
from mercury_nb.ui import widgets as widgets_module
from mercury_nb.ui.status import StatusView, fold
from mercury_nb.ui.widgets import WidgetView, banner_html, change_html, status_html

EVIL = "<script>alert('x')</script>"


class FakeClock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def outcome(**overrides: Any) -> TaskOutcome:
    values: dict[str, Any] = dict(
        task_id="t1", task="build", status="completed", verdict="text-stop",
        answer="All done.", banner="✓ Task complete", steps=2,
        changes=[FileChange(path="app.py", added=3, removed=1, kind="modified",
                            preview="+print('hi')")],
    )
    values.update(overrides)
    return TaskOutcome(**values)


@pytest.mark.parametrize(
    "evil_outcome",
    [
        pytest.param(outcome(answer=f"Here you go {EVIL}"), id="answer-text"),
        pytest.param(outcome(banner=f"✓ Task complete\n  {EVIL}.py +1 −0"), id="banner-text"),
        pytest.param(outcome(changes=[FileChange(path=f"{EVIL}.py", added=1, removed=0,
                                                 kind="created")]), id="file-name-no-preview"),
        pytest.param(outcome(changes=[FileChange(path=f"x{EVIL}.html", added=1, removed=0,
                                                 kind="created", preview=EVIL)]),
                     id="file-name-and-preview"),
        pytest.param(outcome(status="failed", answer=None, banner=f'"><img src=x onerror=1>{EVIL}'),
                     id="attribute-breakout-attempt"),
    ],
)
def test_banner_html_escapes_everything(evil_outcome: TaskOutcome) -> None:
    rendered = banner_html(evil_outcome)
    assert "<script" not in rendered
    assert "<img" not in rendered
    assert "&lt;script&gt;" in rendered


def test_banner_html_shows_answer_banner_and_collapsible_previews() -> None:
    rendered = banner_html(outcome(changes=[
        FileChange(path="a.py", added=2, removed=0, kind="created", preview="x = 1\ny = 2"),
        FileChange(path="b.txt", added=0, removed=4, kind="deleted"),
    ]))
    assert "All done." in rendered and "✓ Task complete" in rendered
    assert rendered.count("<details") == 1  # only the file with a preview collapses
    assert "<summary>a.py <span>+2 −0</span> (created)</summary>" in rendered
    assert "x = 1\ny = 2" in rendered
    assert "b.txt <span>+0 −4</span> (deleted)" in rendered


def test_change_html_escapes_preview_inside_pre() -> None:
    rendered = change_html(FileChange(path="p.md", added=1, removed=0, preview="</pre><b>x</b>"))
    assert "&lt;/pre&gt;&lt;b&gt;x&lt;/b&gt;" in rendered


def test_status_html_escapes_tool_summary() -> None:
    view = fold(StatusView(), ToolStarted(1, "create_file", f"{EVIL}.py"), 0.0)
    rendered = status_html(view, 1.0)
    assert "<script" not in rendered and "create_file" in rendered


def make_view(attached: bool = False, clock: FakeClock | None = None) -> WidgetView:
    return WidgetView(max_updates_per_s=10, attached=attached, clock=clock or FakeClock(),
                      show=False)


def test_fast_stream_is_throttled_and_the_end_always_renders() -> None:
    clock = FakeClock()
    view = make_view(clock=clock)
    view.on_event(TaskStarted("t1", "build", "m", 75))
    view.on_event(StepStarted(1, 75, "m"))
    for _ in range(500):  # 500 tokens within 50 ms of fake time
        clock.now += 0.0001
        view.on_event(TextDelta("tok "))
    assert view._renderer.renders == 1  # only the first update got through
    assert "starting" in view.status.value  # the widget still shows the first state
    view.on_event(TaskFinished(outcome()))
    assert view._renderer.renders == 2
    assert "completed · 2 steps" in view.status.value
    assert "✓ Task complete" in view.banner.value
    assert view.tail.value == ""
    assert view.stop_button.disabled


def test_notices_and_tail_are_escaped_in_widgets() -> None:
    clock = FakeClock()
    view = make_view(clock=clock)
    view.on_event(TextDelta(EVIL))
    clock.now += 1
    view.on_event(Notice(f"⚠ provider: {EVIL}"))
    assert "<script" not in view.notices.value and "&lt;script&gt;" in view.notices.value
    assert "<script" not in view.tail.value and "&lt;script&gt;" in view.tail.value


def test_attached_view_displays_the_banner_as_text_and_html(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shown: list[Any] = []
    monkeypatch.setattr(widgets_module, "display", lambda obj, **kw: shown.append((obj, kw)))
    view = make_view(attached=True)
    done = outcome(answer=f"answer {EVIL}")
    view.on_event(TaskFinished(done))
    (bundle, kwargs), = shown
    assert kwargs == {"raw": True}
    assert bundle["text/plain"] == f"answer {EVIL}\n\n✓ Task complete"
    assert bundle["text/html"] == banner_html(done)
    assert view.banner.value == ""  # shown once, as the cell's output


def test_stop_button_calls_the_bound_stop_even_if_clicked_before_binding() -> None:
    calls: list[str] = []
    early = make_view()
    early.stop_button.click()
    assert early.stop_button.disabled and early.stop_button.description == "Stopping…"
    early.bind_stop(lambda: calls.append("early"))
    late = make_view()
    late.bind_stop(lambda: calls.append("late"))
    assert calls == ["early"]
    late.stop_button.click()
    assert calls == ["early", "late"]


def test_show_error_lands_in_the_views_output_widget() -> None:
    view = make_view()
    view.show_error("Traceback ...\nRuntimeError: boom")
    assert view.errors.outputs[-1]["text"] == "Traceback ...\nRuntimeError: boom\n"
    assert view.errors.outputs[-1]["name"] == "stderr"
    assert view.stop_button.disabled


async def test_ask_widget_preselects_recommended_and_returns_the_choice() -> None:
    import ipywidgets as w

    from mercury_nb.ui.ask_widget import ask_in_box

    box = w.VBox()
    pending = asyncio.ensure_future(
        ask_in_box(box, "Rewrite <it>?", ["rewrite", "patch"], "rewrite", 30))
    while not box.children:
        await asyncio.sleep(0)
    panel = box.children[-1]
    title, choice, confirm = panel.children
    assert "&lt;it&gt;" in title.value
    assert choice.value == "rewrite"
    choice.value = "patch"
    confirm.click()
    assert await pending == "patch"
    assert choice.disabled and confirm.disabled


async def test_ask_widget_times_out_to_none() -> None:
    import ipywidgets as w

    from mercury_nb.ui.ask_widget import ask_in_box

    assert await ask_in_box(w.VBox(), "q", ["a", "b"], "a", 0) is None
