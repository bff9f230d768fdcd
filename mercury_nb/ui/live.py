"""The live-view seam: the RunView protocol, the throttled renderer, which kind of view."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol

from mercury_nb.agent.events import AgentEvent
from mercury_nb.ui.throttle import ThrottleState, flush, flush_due_in, throttle

ViewKind = Literal["widget", "plain"]
PLAIN_ENV = "MERCURY_PLAIN"


class RunView(Protocol):
    """What the kernel glue drives while one task runs.

    ``attached`` views belong to a cell that is still executing (``--wait`` or a blocking
    run), so they may print; detached views only touch what they displayed at cell time.
    """

    def on_event(self, event: AgentEvent) -> None:
        """Fold one agent event into the view (rendering is throttled)."""

    def bind_stop(self, stop: Callable[[], None]) -> None:
        """Wire the Stop control to ``stop`` (cancels the task)."""

    def show_error(self, text: str) -> None:
        """Show a traceback or failure text in this view's cell."""

    def close(self) -> None:
        """Stop timers; called once the task is done, however it ended."""


def view_kind(*, shell_class: str, has_kernel: bool, environ: Mapping[str, str]) -> ViewKind:
    """Widgets where a kernel talks to a comm-capable front end; text everywhere else.

    ``MERCURY_PLAIN=1`` forces text; terminal IPython and shells without a kernel get text.
    """
    if environ.get(PLAIN_ENV, "").strip().lower() in {"1", "true", "yes", "on"}:
        return "plain"
    if shell_class == "TerminalInteractiveShell" or not has_kernel:
        return "plain"
    return "widget"


def kind_for_shell(shell: Any, environ: Mapping[str, str] | None = None) -> ViewKind:
    """:func:`view_kind` for a live IPython shell."""
    return view_kind(
        shell_class=type(shell).__name__,
        has_kernel=getattr(shell, "kernel", None) is not None,
        environ=os.environ if environ is None else environ,
    )


class Timer(Protocol):
    """A scheduled call that can be called off (``asyncio.TimerHandle`` is one)."""

    def cancel(self) -> None:
        """Call it off: the callback does not run."""


Later = Callable[[float, Callable[[], None]], Timer | None]
"""Schedules ``callback`` after ``delay`` seconds; None where nothing can run it later."""


def on_running_loop(delay: float, callback: Callable[[], None]) -> Timer | None:
    """The views' default :data:`Later`: the running asyncio loop's ``call_later``, or None
    when no loop runs (the final render then shows the state)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None
    return loop.call_later(delay, callback)


class ThrottledRenderer:
    """Calls ``render(now)`` at most ``max_per_s`` times a second; a held-back update is
    flushed by a timer ``later`` schedules (the running loop's by default), and
    :meth:`final` always renders."""

    def __init__(
        self,
        render: Callable[[float], None],
        max_per_s: float,
        clock: Callable[[], float] = time.monotonic,
        later: Later = on_running_loop,
    ) -> None:
        self._render = render
        self._max_per_s = max_per_s
        self._clock = clock
        self._state = ThrottleState()
        self._later = later
        self._timer: Timer | None = None
        self.renders = 0

    def request(self) -> None:
        """Something changed: render now if the throttle allows, else owe a flush."""
        now = self._clock()
        self._state, render_now = throttle(self._state, now, self._max_per_s)
        if render_now:
            self._do_render(now)
        else:
            self._schedule_flush(now)

    def final(self) -> None:
        """The last update: always rendered, and no timer left behind."""
        self.cancel()
        now = self._clock()
        self._state, _ = flush(self._state, now, final=True)
        self._do_render(now)

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _do_render(self, now: float) -> None:
        self.renders += 1
        self._render(now)

    def _schedule_flush(self, now: float) -> None:
        if self._timer is not None:
            return
        delay = flush_due_in(self._state, now, self._max_per_s)
        if delay is not None:
            self._timer = self._later(delay, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        now = self._clock()
        self._state, render_now = flush(self._state, now)
        if render_now:
            self._do_render(now)
