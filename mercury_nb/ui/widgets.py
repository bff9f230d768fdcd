"""The ipywidgets view: status line, Stop button, notices, the sanitized answer and the banner.

While the task runs the status line is redrawn every :data:`TICK_S` on the kernel's loop, so
the elapsed time and a stall pulse's seconds keep growing. When it ends the ticking stops,
the Stop button and the live notices (progress such as "Checking my work…") go away, and the
verdict takes their place: the answer as sanitized Markdown, then the escaped banner.
"""

from __future__ import annotations

import asyncio
import html
import time
from collections.abc import Callable
from typing import Any, cast

import ipywidgets as widgets
from IPython import display as ipython_display

from mercury_nb.agent.events import AgentEvent, TaskFinished
from mercury_nb.contract.banners import change_line
from mercury_nb.contract.outcome import FileChange, TaskOutcome
from mercury_nb.contract.task_status import EndingStatus
from mercury_nb.contract.untrusted import shown_name
from mercury_nb.ui.live import ThrottledRenderer
from mercury_nb.ui.markdown import markdown_html
from mercury_nb.ui.plain import final_text
from mercury_nb.ui.status import SEPARATOR, StatusView, fold, status_line, tool_detail

display = cast(Callable[..., Any], ipython_display.display)  # IPython's display is untyped

TICK_S = 1.0
"""How often the elapsed time is refreshed while the task runs silently."""

WIDGET_TEXT = "mercury · live status (widgets need a front end that renders ipywidgets)"
"""``text/plain`` of the live widget's display, fixed so recorded notebooks stay stable."""

_STATUS_COLOURS: dict[EndingStatus, str] = {
    "completed": "#2e7d32",
    "paused": "#b26a00",
    "failed": "#c62828",
    "aborted": "#616161",
}
UNGROUNDED_COLOUR = "#b26a00"
"""The banner's edge when the answer talks about files the task never read."""


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def change_html(change: FileChange) -> str:
    """One changed file as a collapsible ``<details>`` with its preview; all text escaped,
    the path shown by :func:`shown_name` (on one line, quoted when it needs to be)."""
    summary = (
        f"{_esc(shown_name(change.path))} <span>+{change.added} −{change.removed}</span>"
        f" ({_esc(change.kind)})"
    )
    if not change.preview:
        return f'<div class="mercury-change">{summary}</div>'
    return (
        f'<details class="mercury-change"><summary>{summary}</summary>'
        f'<pre style="margin:2px 0 6px 1em">{_esc(change.preview)}</pre></details>'
    )


def _banner_body(outcome: TaskOutcome) -> tuple[str, list[FileChange]]:
    """The banner's lines as HTML, each changed file once: a file the banner lists with a
    preview is that line as a collapsible ``<details>``; returns the changes it did not list."""
    previews = {change_line(change): change for change in outcome.changes if change.preview}
    listed = {change_line(change) for change in outcome.changes}
    parts: list[str] = []
    text: list[str] = []
    for line in outcome.banner.split("\n"):
        change = previews.get(line.strip())
        if change is None:
            text.append(line)
            continue
        if text:
            parts.append(f"<div>{_esc(chr(10).join(text))}</div>")
            text = []
        parts.append(
            f'<details class="mercury-change"><summary>{_esc(line)}</summary>'
            f'<pre style="margin:2px 0 6px 1em;font-weight:400">{_esc(change.preview)}</pre>'
            "</details>")
    if text:
        parts.append(f"<div>{_esc(chr(10).join(text))}</div>")
    in_banner = {line.strip() for line in outcome.banner.split("\n")} & listed
    rest = [change for change in outcome.changes if change_line(change) not in in_banner]
    return "".join(parts), rest


def banner_html(outcome: TaskOutcome) -> str:
    """The final verdict as HTML: the answer (Markdown, sanitized), the banner with each
    changed file once (its preview collapsible), all escaped. Nothing from the model or the
    disk reaches the page unsanitized."""
    colour = _STATUS_COLOURS.get(outcome.status, "#616161")
    if outcome.unread:  # an answer about files it never read is delivered, with a warning
        colour = UNGROUNDED_COLOUR
    parts = [f'<div class="mercury-outcome mercury-{_esc(outcome.status)}">']
    if outcome.answer and outcome.answer.strip():
        parts.append(
            '<div class="mercury-answer" style="margin-bottom:6px;line-height:1.5">'
            f"{markdown_html(outcome.answer.strip())}</div>"
        )
    body, rest = _banner_body(outcome)
    parts.append(
        '<div class="mercury-banner" style="white-space:pre-wrap;font-weight:600;line-height:1.5;'
        f'border-left:4px solid {colour};padding:4px 8px">{body}</div>'
    )
    parts.extend(change_html(change) for change in rest)
    parts.append("</div>")
    return "".join(parts)


def status_html(view: StatusView, now: float) -> str:
    """The live status line, with the running tool's summary (or the stall watchdog's
    pulse, which names it), as escaped HTML."""
    text = status_line(view, now)
    detail = tool_detail(view.tool, view.tool_summary) if view.tool and not view.pulse else ""
    if detail:
        text += f"{SEPARATOR}{detail}"
    return (
        '<div style="font-family:monospace;white-space:nowrap;overflow:hidden;'
        f'text-overflow:ellipsis">mercury{SEPARATOR}{_esc(text)}</div>'
    )


def notices_html(view: StatusView) -> str:
    return "<br>".join(_esc(notice) for notice in view.notices)


def tail_html(view: StatusView) -> str:
    """The model's text as it streams (escaped; the final answer replaces it): the newest
    lines in view, older ones a scroll up."""
    if not view.tail:
        return ""
    cut = "…" if view.tail_cut else ""
    return (
        '<div class="mercury-live-text" style="max-height:9em;overflow-y:auto;display:flex;'
        'flex-direction:column-reverse;border-left:3px solid #1565c0;padding:2px 8px;'
        'margin:2px 0"><div style="white-space:pre-wrap;line-height:1.45;color:#444">'
        f"{cut}{_esc(view.tail)}<span style=\"color:#1565c0\">▍</span></div></div>"
    )


def _show(widget: widgets.HTML, value: str) -> None:
    """Set an HTML widget's value; an empty one takes no room (display: none)."""
    if widget.value != value:
        widget.value = value
    display_value = None if value else "none"
    if widget.layout.display != display_value:
        widget.layout.display = display_value


class WidgetView:
    """The live widget of one task, displayed in the magic's cell when it is built.

    Every later update goes through widget state (comm messages), so it lands in this
    cell's widget however many cells ran since. When ``attached`` (the cell still runs),
    the ending is also displayed as a rich output whose ``text/plain`` is the banner text,
    so headless runs (nbclient, nbval) record it.
    """

    def __init__(
        self,
        *,
        max_updates_per_s: float,
        attached: bool,
        clock: Callable[[], float] = time.monotonic,
        show: bool = True,
        model: str = "",
    ) -> None:
        self.attached = attached
        self.view = StatusView(model=model)  # the model is known at once: one start line
        self._clock = clock
        self._stop: Callable[[], None] | None = None
        self._stop_requested = False
        self._ticker: asyncio.TimerHandle | None = None
        self._live = True
        self.status = widgets.HTML(value=status_html(self.view, clock()),
                                   layout=widgets.Layout(flex="1 1 auto", min_width="0",
                                                         overflow="hidden"))
        self.stop_button = widgets.Button(
            description="Stop", button_style="danger", icon="stop", tooltip="Stop this task",
            layout=widgets.Layout(flex="0 0 auto"),
        )
        self.stop_button.on_click(self._on_stop_click)
        self.tail = widgets.HTML(layout=widgets.Layout(display="none"))
        self.notices = widgets.HTML(layout=widgets.Layout(display="none"))
        self.banner = widgets.HTML(layout=widgets.Layout(display="none"))
        self.errors = widgets.Output()
        self.box = widgets.VBox(
            [widgets.HBox([self.status, self.stop_button]), self.tail, self.notices,
             self.banner, self.errors]
        )
        self._renderer = ThrottledRenderer(self._render, max_updates_per_s, clock)
        if show:
            bundle = self.box._repr_mimebundle_()
            bundle["text/plain"] = WIDGET_TEXT
            display(bundle, raw=True)
        self._schedule_tick()

    # --- RunView -----------------------------------------------------------------------
    def on_event(self, event: AgentEvent) -> None:
        self.view = fold(self.view, event, self._clock())
        if isinstance(event, TaskFinished):
            self._finish(event.outcome)
        else:
            self._renderer.request()
            if self._ticker is None and self._live:  # built before a loop ran: tick from now
                self._schedule_tick()

    def bind_stop(self, stop: Callable[[], None]) -> None:
        self._stop = stop
        if self._stop_requested:
            stop()

    def show_error(self, text: str) -> None:
        self.errors.append_stderr(text if text.endswith("\n") else text + "\n")
        self._end_live()

    async def ask(
        self, question: str, options: list[str], recommended: str, timeout_s: float
    ) -> str | None:
        """ask_user: show the options (recommended preselected); None when time runs out."""
        from mercury_nb.ui.ask_widget import ask_in_box

        return await ask_in_box(self.box, question, options, recommended, timeout_s)

    def close(self) -> None:
        self._renderer.cancel()
        self._end_live()

    # --- internals ---------------------------------------------------------------------
    def _finish(self, outcome: TaskOutcome) -> None:
        self._end_live()
        self._renderer.final()
        if self.attached:
            display({"text/plain": final_text(outcome), "text/html": banner_html(outcome)},
                    raw=True)
        else:
            _show(self.banner, banner_html(outcome))

    def _render(self, now: float) -> None:
        status = status_html(self.view, now)
        if self.status.value != status:
            self.status.value = status
        _show(self.tail, "" if self.view.finished else tail_html(self.view))
        _show(self.notices, "" if self.view.finished else notices_html(self.view))

    def _on_stop_click(self, _button: widgets.Button) -> None:
        self.stop_button.disabled = True
        self.stop_button.description = "Stopping…"
        self._stop_requested = True
        if self._stop is not None:
            self._stop()

    def _end_live(self) -> None:
        """The task is over: no more ticks, no Stop button, no live notices."""
        self._live = False
        self._cancel_tick()
        self.stop_button.disabled = True
        self.stop_button.layout.display = "none"
        _show(self.notices, "")

    def _schedule_tick(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._ticker = loop.call_later(TICK_S, self._tick)

    def _tick(self) -> None:
        self._ticker = None
        if not self._live:
            return
        self._renderer.request()
        self._schedule_tick()

    def _cancel_tick(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
