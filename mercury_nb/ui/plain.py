"""Plain-text view for terminals, the CLI and widget-less front ends: a few lines, the banner."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO, cast

from mercury_nb.agent.events import (
    AgentEvent,
    Notice,
    Pulse,
    TaskFinished,
    TaskStarted,
    ToolFinished,
    ToolProgress,
    ToolStarted,
)
from mercury_nb.contract.outcome import TaskOutcome
from mercury_nb.contract.untrusted import quoted_answer
from mercury_nb.ui.live import ThrottledRenderer
from mercury_nb.ui.status import (
    SEPARATOR,
    StatusView,
    fold,
    footer,
    start_text,
    status_line,
    tool_label,
)


def final_text(outcome: TaskOutcome) -> str:
    """The closing text of a task: the model's answer (if any, quoted: no line of it can pass
    for the product's), then the banner and its footer (``4 steps · 12.3k tokens · ~$0.004``,
    once a provider reported tokens)."""
    answer = outcome.answer.strip() if outcome.answer else ""
    parts = [quoted_answer(answer)] if answer else []
    parts.append(banner_with_footer(outcome))
    return "\n\n".join(parts)


def banner_with_footer(outcome: TaskOutcome) -> str:
    """The banner, then its footer on a line of its own (when there is one)."""
    below = footer(outcome)
    return f"{outcome.banner}\n{below}" if below else outcome.banner


def event_line(view: StatusView, event: AgentEvent) -> str | None:
    """The line printed for ``event`` (``view`` already folded), or ``None`` to stay quiet.

    Only starts, tool calls, failures, notices, stall pulses and the ending print; streamed
    tokens never do, and no line carries a time except a pulse (which says how long it has
    been silent), so recorded notebook output is reproducible.
    """
    match event:
        case TaskStarted(model=model, attached=attached):
            return f"mercury{SEPARATOR}{start_text(model, attached)}"
        case ToolStarted(name=name, summary=summary):
            budget = f"step {view.step}/{view.max_steps}" if view.max_steps else f"step {view.step}"
            return f"{budget}{SEPARATOR}{tool_label(name, summary)}"
        case ToolFinished(ok=False, name=name, summary=summary):
            return f"  ✗ {tool_label(name, summary)} failed"
        case ToolProgress(text=text):  # run_cells' cell 7/12: no time, so output repeats
            return f"  {text}"
        case Notice(text=text) | Pulse(text=text):
            return text
        case TaskFinished(outcome=outcome):
            return "\n" + final_text(outcome)
        case _:
            return None


def status_block(view: StatusView, now: float, error: str | None = None) -> str:
    """The whole text shown in a display handle: status line, notices, ending, error."""
    lines = [f"mercury{SEPARATOR}{status_line(view, now)}"]
    lines.extend(view.notices)
    if view.outcome is not None:
        lines.extend(("", final_text(view.outcome)))
    if error:
        lines.extend(("", error))
    return "\n".join(lines)


class PlainView:
    """Attached (the cell is still running): prints event lines as they come.
    Detached (the task outlives the cell): one display handle, updated through the throttle.
    """

    def __init__(
        self,
        *,
        max_updates_per_s: float,
        attached: bool,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
        model: str = "",
    ) -> None:
        self.attached = attached
        self.view = StatusView(model=model)
        self._clock = clock
        self._stream = stream
        self._error: str | None = None
        self._handle: Any = None
        self._renderer = ThrottledRenderer(self._render, max_updates_per_s, clock)
        if not attached:
            from IPython.display import display

            show = cast(Callable[..., Any], display)  # IPython's display is untyped
            self._handle = show(self._bundle(clock()), raw=True, display_id=True)

    def on_event(self, event: AgentEvent) -> None:
        self.view = fold(self.view, event, self._clock())
        if self.attached:
            line = event_line(self.view, event)
            if line is not None:
                self._print(line)
        elif isinstance(event, TaskFinished):
            self._renderer.final()
        else:
            self._renderer.request()

    def bind_stop(self, stop: Callable[[], None]) -> None:
        """Text has no button: Ctrl-C or the kernel's interrupt stops the task."""

    def show_error(self, text: str) -> None:
        if self.attached:
            self._print(text, error=True)
            return
        self._error = text
        self._renderer.final()

    def close(self) -> None:
        self._renderer.cancel()

    def _print(self, text: str, *, error: bool = False) -> None:
        target = self._stream or (sys.stderr if error else sys.stdout)
        print(text, file=target, flush=True)

    def _bundle(self, now: float) -> dict[str, str]:
        return {"text/plain": status_block(self.view, now, self._error)}

    def _render(self, now: float) -> None:
        if self._handle is not None:
            self._handle.update(self._bundle(now), raw=True)
