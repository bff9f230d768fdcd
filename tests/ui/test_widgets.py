"""The ipywidgets view: everything escaped, previews collapsible, updates throttled, Stop wired."""

from __future__ import annotations

import asyncio
import html.parser as html_parser
from typing import Any

import pytest
from ui_timers import FakeLater

from mercury_nb.agent.events import (
    Notice,
    StepStarted,
    TaskFinished,
    TaskStarted,
    TextDelta,
    ToolStarted,
)
from mercury_nb.contract.outcome import FileChange, TaskOutcome, Usage
from mercury_nb.ui import widgets as widgets_module
from mercury_nb.ui.status import StatusView, fold
from mercury_nb.ui.verdict_html import banner_html, change_html
from mercury_nb.ui.widgets import (
    TICK_S,
    WIDGET_TEXT,
    WidgetView,
    status_html,
)

EVIL = "<script>alert('x')</script>"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


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


def test_banner_html_ends_with_the_footer_escaped_once_tokens_were_reported() -> None:
    spent = outcome(steps=4, cost_usd=None, unpriced=["<b>local</b>"], usage={
        "<b>local</b>": Usage(prompt_tokens=12_000, completion_tokens=345, total_tokens=12_345)})
    rendered = banner_html(spent)
    assert ('<div class="mercury-footer" style="font-family:monospace;color:#616161;'
            'margin-top:2px">4 steps · 12.3k tokens · cost unknown (no price known for '
            '&lt;b&gt;local&lt;/b&gt;: tokens only)</div></div>') in rendered
    assert "mercury-footer" not in banner_html(outcome())  # nothing reported, nothing said


def test_the_widget_lists_each_changed_file_once() -> None:
    """The banner lists the changes; the widget shows each once: the banner's line, the
    collapsible summary of its preview when it has one."""
    rendered = banner_html(outcome(
        banner="✓ Task complete\n  +2 −0 a.py (created)\n  +0 −4 b.txt (deleted)\n"
               "  ✓ Verified: read-back of a.py ✓",
        changes=[
            FileChange(path="a.py", added=2, removed=0, kind="created", preview="x = 1"),
            FileChange(path="b.txt", added=0, removed=4, kind="deleted"),
        ]))
    assert rendered.count("b.txt") == 1
    assert rendered.count("+2 −0 a.py (created)") == 1
    assert "<summary>  +2 −0 a.py (created)</summary>" in rendered
    assert rendered.index("✓ Task complete") < rendered.index("a.py") \
        < rendered.index("b.txt") < rendered.index("Verified")


def test_change_html_escapes_preview_inside_pre() -> None:
    rendered = change_html(FileChange(path="p.md", added=1, removed=0, preview="</pre><b>x</b>"))
    assert "&lt;/pre&gt;&lt;b&gt;x&lt;/b&gt;" in rendered


def test_status_html_escapes_tool_summary() -> None:
    view = fold(StatusView(), ToolStarted(1, "create_file", f"{EVIL}.py"), 0.0)
    rendered = status_html(view, 1.0)
    assert "<script" not in rendered and "create_file" in rendered


def make_view(attached: bool = False, clock: FakeClock | None = None,
              later: FakeLater | None = None) -> WidgetView:
    return WidgetView(max_updates_per_s=10, attached=attached, clock=clock or FakeClock(),
                      show=False, later=later or FakeLater())


def test_fast_stream_is_throttled_and_the_end_always_renders() -> None:
    clock = FakeClock()
    view = make_view(clock=clock)
    view.on_event(TaskStarted("t1", "build", "m", 75))  # the first update gets through
    redrawn: list[str] = []  # every value the widgets are sent from now on
    for widget in (view.status, view.tail, view.notices):
        widget.observe(lambda change: redrawn.append(change["new"]), names="value")
    view.on_event(StepStarted(1, 75, "m"))
    for _ in range(500):  # 500 tokens within 50 ms of fake time
        clock.now += 0.0001
        view.on_event(TextDelta("tok "))
    assert redrawn == []  # all held back: not one of the 500 tokens was drawn
    assert "working on it…" in view.status.value  # the widget still shows the first state
    view.on_event(TaskFinished(outcome()))
    assert redrawn  # the end is drawn however soon it comes
    assert "completed · 2 steps" in view.status.value
    assert "✓ Task complete" in view.banner.value
    assert view.tail.value == ""
    assert view.stop_button.disabled


def test_notices_and_tail_are_escaped_in_widgets() -> None:
    clock = FakeClock()
    view = make_view(clock=clock)
    view.on_event(TextDelta(EVIL + " "))  # shown once its word is whole
    clock.now += 1
    view.on_event(Notice(f"⚠ provider: {EVIL}"))
    assert "<script" not in view.notices.value and "&lt;script&gt;" in view.notices.value
    assert "<script" not in view.tail.value and "&lt;script&gt;" in view.tail.value


class FakeHandle:
    """A display handle that keeps its updates."""

    def __init__(self) -> None:
        self.updates: list[tuple[dict[str, str], dict[str, Any]]] = []

    def update(self, obj: dict[str, str], **kwargs: Any) -> None:
        self.updates.append((obj, kwargs))


def shown_view(monkeypatch: pytest.MonkeyPatch, *, attached: bool,
               clock: FakeClock) -> tuple[WidgetView, list[Any], FakeHandle]:
    shown: list[Any] = []
    handle = FakeHandle()

    def fake_display(obj: Any, **kwargs: Any) -> FakeHandle:
        shown.append((obj, kwargs))
        return handle

    monkeypatch.setattr(widgets_module, "display", fake_display)
    view = WidgetView(max_updates_per_s=10, attached=attached, clock=clock)
    return view, shown, handle


def test_the_end_replaces_the_widget_display_by_the_static_verdict(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = FakeClock()
    view, shown, handle = shown_view(monkeypatch, attached=False, clock=clock)
    ((live, kwargs),) = shown
    assert kwargs == {"raw": True, "display_id": True}
    assert WIDGET_VIEW in live and live["text/plain"] == WIDGET_TEXT
    view.on_event(TaskStarted("t1", "build", "m", 75))
    clock.now += 3
    done = outcome(answer=f"answer {EVIL}")
    view.on_event(TaskFinished(done))
    clock.now += 5
    view.close()  # the same verdict: not sent again
    ((static, kwargs),) = handle.updates
    assert kwargs == {"raw": True}
    assert set(static) == {"text/plain", "text/html"}  # nothing a reader needs a kernel for
    assert static["text/plain"] == (
        f"mercury · completed · 2 steps · 3s\n\n│ answer {EVIL}\n\n✓ Task complete"
    )
    assert banner_html(done) in static["text/html"]
    assert "completed · 2 steps · 3s" in static["text/html"]
    assert "<script" not in static["text/html"]
    assert len(shown) == 1  # replaced in place, nothing displayed beside it
    assert view.banner.value == banner_html(done)  # the live widget shows it too


def test_an_attached_cell_shows_the_verdict_beside_and_its_widget_becomes_the_status(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = FakeClock()
    view, shown, handle = shown_view(monkeypatch, attached=True, clock=clock)
    view.on_event(TaskStarted("t1", "build", "m", 75))
    clock.now += 3
    done = outcome(answer=f"answer {EVIL}")
    view.on_event(TaskFinished(done))
    view.close()
    (_, (verdict, kwargs)) = shown
    assert kwargs == {"raw": True}
    assert verdict == {"text/plain": f"│ answer {EVIL}\n\n✓ Task complete",
                       "text/html": banner_html(done)}
    ((status, _),) = handle.updates  # where the widget was: the last status line, static
    assert status["text/plain"] == "mercury · completed · 2 steps · 3s"
    assert "completed · 2 steps · 3s" in status["text/html"] and WIDGET_VIEW not in status
    assert "Task complete" not in status["text/html"]  # the verdict is shown once
    assert view.banner.value == ""


def test_a_task_that_ended_without_an_outcome_leaves_its_error_as_static_output(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = FakeClock()
    view, _, handle = shown_view(monkeypatch, attached=False, clock=clock)
    view.on_event(TaskStarted("t1", "build", "m", 75))
    view.on_event(StepStarted(1, 75, "m"))
    clock.now += 2
    view.show_error(f"Traceback (most recent call last):\nValueError: {EVIL}")
    view.close()
    ((static, _),) = handle.updates
    assert static["text/plain"] == (
        "mercury · step 1/75 · thinking · 2s\n\n"
        f"Traceback (most recent call last):\nValueError: {EVIL}"
    )
    assert "mercury-error" in static["text/html"] and "&lt;script&gt;" in static["text/html"]
    assert "<script" not in static["text/html"] and WIDGET_VIEW not in static


def test_a_view_never_displayed_has_nothing_to_replace(monkeypatch: pytest.MonkeyPatch) -> None:
    shown: list[Any] = []
    monkeypatch.setattr(widgets_module, "display", lambda *args, **kwargs: shown.append(args))
    view = make_view()
    view.on_event(TaskFinished(outcome()))
    view.close()  # no display to update: nothing is replaced, nothing displayed instead
    assert shown == []
    assert view.banner.value == banner_html(outcome())  # the widget itself has the verdict


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
    for _ in range(1000):  # bounded: yield to the loop until the question is shown
        if box.children:
            break
        await asyncio.sleep(0)
    assert box.children, "the question never appeared"
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


# --- the end of a task, the answer, the live seconds, the start line ----------------------
CHECKING = "Checking my work before I call it done — running the build/tests now…"


@pytest.mark.parametrize("attached", [pytest.param(False, id="background"),
                                      pytest.param(True, id="wait")])
def test_the_end_removes_the_checking_line_and_the_stop_button(
    attached: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(widgets_module, "display", lambda obj, **kw: None)
    clock = FakeClock()
    view = make_view(attached=attached, clock=clock)
    view.on_event(TaskStarted("t1", "build", "m", 75))
    clock.now += 1
    view.on_event(Notice(CHECKING))
    assert CHECKING in view.notices.value
    assert view.stop_button.layout.display != "none"
    view.on_event(TaskFinished(outcome()))
    assert view.notices.value == ""
    assert view.stop_button.layout.display == "none" and view.stop_button.disabled


def test_a_task_that_ends_without_an_outcome_also_loses_its_stop_button() -> None:
    clock = FakeClock()
    view = make_view(clock=clock)
    clock.now += 1
    view.on_event(Notice(CHECKING))
    assert CHECKING in view.notices.value
    view.show_error("Stopped — the task was cancelled before it could report an outcome.")
    view.close()
    assert view.stop_button.layout.display == "none" and view.notices.value == ""


class TagCollector(html_parser.HTMLParser):
    """Every tag and attribute a browser would build from an HTML string."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes.extend(attrs)


def parsed(html: str) -> TagCollector:
    collector = TagCollector()
    collector.feed(html)
    return collector


HOSTILE_ANSWER = (
    "**Done.** The fix is in `app.py`:\n\n- one\n- two\n\n"
    "<img src=x onerror=alert(1)> <script>alert(2)</script>\n\n"
    '<a href="javascript:alert(3)">click</a> [docs](javascript:alert(4)) '
    "[site](https://example.org) ![pixel](https://example.org/p.png)\n\n"
    "```\n<b>code</b>\n```"
)


def test_a_chat_answer_renders_as_markdown_and_hostile_html_comes_out_inert() -> None:
    rendered = banner_html(outcome(answer=HOSTILE_ANSWER))
    answer = rendered.split('<div class="mercury-answer"', 1)[1].split(">", 1)[1]
    answer = answer.split('<div class="mercury-banner"')[0]  # what the model wrote
    found = parsed(answer)
    assert "<strong>Done.</strong>" in answer and "<code>app.py</code>" in answer
    assert "**" not in answer and "<li>one</li>" in answer
    assert not {"img", "script", "iframe", "style"} & set(found.tags)
    assert not [name for name, _ in found.attributes if name.startswith("on") or name == "style"]
    hrefs = [value for name, value in found.attributes if name == "href"]
    assert hrefs == ["https://example.org"]
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in answer  # shown as text, never run
    assert "&lt;b&gt;code&lt;/b&gt;" in answer


def test_the_pulse_seconds_keep_growing_until_the_task_ends() -> None:
    from mercury_nb.agent.events import Pulse
    from mercury_nb.contract.config import MercuryConfig
    from mercury_nb.contract.recovery import stall_watchdog as wd

    clock = FakeClock(now=100.0)
    later = FakeLater()
    view = make_view(clock=clock, later=later)
    view.on_event(StepStarted(1, 75, "m"))
    view.on_event(ToolStarted(1, "run_command", "run_command: sleep 120"))
    state = wd.start_watchdog(100_000.0)  # the watchdog's clock: the same seconds, in ms
    state, _ = wd.step_watchdog(state, wd.CommandStarted(100_000.0, "sleep 120"),
                                MercuryConfig())
    clock.now = 104.0
    view.on_event(Pulse("running sleep 120 · 4 s", watch=state))
    assert "running sleep 120 · 4 s" in view.status.value
    clock.now = 154.2
    (tick,) = later.pending(TICK_S)  # a redraw is armed
    tick.fire()  # the timer redraws the line with no new event
    assert "running sleep 120 · 54 s" in view.status.value
    (armed,) = later.pending(TICK_S)  # and arms the next redraw

    view.on_event(TaskFinished(outcome()))
    assert armed.cancelled and later.pending() == []  # ticking stopped
    finished = view.status.value
    redrawn: list[str] = []
    view.status.observe(lambda change: redrawn.append(change["new"]), names="value")
    clock.now = 999.0
    armed.callback()  # a tick that was already on its way when the task ended
    assert redrawn == [] and view.status.value == finished  # draws nothing
    assert later.pending() == []  # and arms nothing


def test_the_start_line_is_the_same_from_the_first_frame() -> None:
    clock = FakeClock()
    view = WidgetView(max_updates_per_s=10, attached=False, clock=clock, show=False,
                      model="scripted/demo")
    first = view.status.value
    view.on_event(TaskStarted("t1", "build", "scripted/demo", 75))
    assert first == view.status.value
    assert "mercury · scripted/demo · working on it… · 0s" in first


@pytest.mark.parametrize(
    ("status", "unread", "edge"),
    [
        ("completed", [], "#2e7d32"),
        ("completed", ["README.md"], "#b26a00"),  # delivered, but not from the file it names
        ("paused", [], "#b26a00"),
        ("failed", [], "#c62828"),
    ],
)
def test_the_banner_edge_warns_of_an_answer_about_unread_files(
    status: str, unread: list[str], edge: str
) -> None:
    rendered = banner_html(outcome(status=status, unread=unread, changes=[]))
    assert f"border-left:4px solid {edge}" in rendered


def test_change_html_colours_diff_lines_and_lists_notebook_cells() -> None:
    from mercury_nb.contract.notebook_changes import CellChange, NotebookDiff, SourceLine

    plain = change_html(FileChange(path="a.py", added=1, removed=1, preview="+new <b>\n-old"))
    assert '<span style="background:rgba(46,160,67,0.18)">+new &lt;b&gt;</span>' in plain
    assert '<span style="background:rgba(248,81,73,0.18)">-old</span>' in plain
    notebook = NotebookDiff(cells=[
        CellChange(kind="modified", number=2, source=[SourceLine(op=" ", text="x = 1"),
                                                      SourceLine(op="-", text="y = 2")]),
        CellChange(kind="added", number=3, source=[SourceLine(op="+", text="print(1)")]),
        CellChange(kind="removed", number=4, cell_type="markdown"),
    ])
    rendered = change_html(FileChange(path="n.ipynb", added=9, removed=3,
                                      preview='  "source": [', notebook=notebook))
    assert '"source"' not in rendered  # cells, never the notebook's JSON lines
    assert ("cell 2 changed (code): "
            '<span style="background:rgba(248,81,73,0.18)">-y = 2</span>') in rendered
    assert '<span style="background:rgba(46,160,67,0.18)">cell 3 added (code)</span>' in rendered
    assert "was cell 4, removed (markdown)" in rendered
