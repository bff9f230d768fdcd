"""The ipywidgets view: status line, Stop button, notices, the sanitized answer and the banner.

While the task runs the status line is redrawn every :data:`TICK_S` on the kernel's loop, so
the elapsed time and a stall pulse's seconds keep growing. When it ends the ticking stops,
the Stop button and the live notices (progress such as "Checking my work…") go away, and the
verdict takes their place: the answer as sanitized Markdown, then the escaped banner.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, cast

import ipywidgets as widgets
from IPython import display as ipython_display

from mercury_nb.agent.events import AgentEvent, TaskFinished
from mercury_nb.contract.outcome import TaskOutcome
from mercury_nb.contract.permissions import ApprovalAnswer, ApprovalRequest
from mercury_nb.ui.live import Later, ThrottledRenderer, Timer, on_running_loop
from mercury_nb.ui.plain import final_text
from mercury_nb.ui.status import SEPARATOR, StatusView, fold, status_line, tool_detail
from mercury_nb.ui.verdict_html import banner_html
from mercury_nb.ui.verdict_html import esc as _esc

display = cast(Callable[..., Any], ipython_display.display)  # IPython's display is untyped

TICK_S = 1.0
"""How often the elapsed time is refreshed while the task runs silently."""

WIDGET_TEXT = "mercury · live status (widgets need a front end that renders ipywidgets)"
"""``text/plain`` of the live widget's display, fixed so recorded notebooks stay stable."""

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


def static_verdict(view: StatusView, now: float, error: str = "", *,
                   verdict: bool = True) -> dict[str, str]:
    """What the widget's display becomes once the task is over: its last status line, the
    verdict (:func:`banner_html`; not when ``verdict`` is False, for a cell that displays it
    beside) and any error, as HTML and as text. A saved notebook then holds outputs any reader
    shows (Lab reopened, nbviewer, GitHub), not a widget view whose model is gone with the
    kernel ("Error displaying widget: model not found")."""
    text = [f"mercury{SEPARATOR}{status_line(view, now)}"]
    parts = [f'<div class="mercury-static">{status_html(view, now)}']
    if view.outcome is not None and verdict:
        text.extend(("", final_text(view.outcome)))
        parts.append(banner_html(view.outcome))
    if error:
        text.extend(("", error.rstrip("\n")))
        parts.append('<pre class="mercury-error" style="color:#c62828;white-space:pre-wrap;'
                     f'margin:4px 0">{_esc(error.rstrip())}</pre>')
    parts.append("</div>")
    return {"text/plain": "\n".join(text), "text/html": "".join(parts)}


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
    cell's widget however many cells ran since. When the task is over, the widget's display
    (by its display id) is replaced by the :func:`static_verdict`, so what the notebook saves
    reads without a kernel. When ``attached`` (the cell still runs) the verdict is displayed
    beside it instead, as a rich output whose ``text/plain`` is the banner text, and the
    widget's display keeps the status line: headless runs that apply no display updates
    (nbval) record the verdict too.

    ``later`` schedules the view's timers (the redraw tick and the throttle's owed flush):
    the running loop's ``call_later`` by default, a fake one in tests.
    """

    def __init__(
        self,
        *,
        max_updates_per_s: float,
        attached: bool,
        clock: Callable[[], float] = time.monotonic,
        show: bool = True,
        model: str = "",
        later: Later = on_running_loop,
    ) -> None:
        self.attached = attached
        self.view = StatusView(model=model)  # the model is known at once: one start line
        self._clock = clock
        self._stop: Callable[[], None] | None = None
        self._stop_requested = False
        self._later = later
        self._ticker: Timer | None = None
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
        self._renderer = ThrottledRenderer(self._render, max_updates_per_s, clock, later)
        self._handle: Any = None
        self._error = ""
        self._static: dict[str, str] | None = None
        if show:
            bundle = self.box._repr_mimebundle_()
            bundle["text/plain"] = WIDGET_TEXT
            self._handle = display(bundle, raw=True, display_id=True)
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
        line = text if text.endswith("\n") else text + "\n"
        self.errors.append_stderr(line)
        self._error += line
        self._end_live()

    async def ask(
        self, question: str, options: list[str], recommended: str, timeout_s: float
    ) -> str | None:
        """ask_user: show the options (recommended preselected); None when time runs out."""
        from mercury_nb.ui.ask_widget import ask_in_box

        return await ask_in_box(self.box, question, options, recommended, timeout_s)

    async def approve(self, request: ApprovalRequest, timeout_s: float) -> ApprovalAnswer:
        """The permission edge's ask: the command (or diff) and its three buttons."""
        from mercury_nb.ui.approval_widget import approve_in_box

        return await approve_in_box(self.box, request, timeout_s)

    def close(self) -> None:
        self._renderer.cancel()
        self._end_live()
        self._leave_static()  # however it ended: with an outcome, an error, or neither

    # --- internals ---------------------------------------------------------------------
    def _finish(self, outcome: TaskOutcome) -> None:
        self._end_live()
        self._renderer.final()
        if self.attached:
            display({"text/plain": final_text(outcome), "text/html": banner_html(outcome)},
                    raw=True)
        else:
            _show(self.banner, banner_html(outcome))
        self._leave_static()

    def _leave_static(self) -> None:
        """Replace the widget's display by the static verdict (once per change of it)."""
        if self._handle is None:
            return
        bundle = static_verdict(self.view, self._clock(), self._error, verdict=not self.attached)
        if bundle != self._static:
            self._static = bundle
            self._handle.update(bundle, raw=True)

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
        self._ticker = self._later(TICK_S, self._tick)

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
