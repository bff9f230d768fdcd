"""What a running task is doing now (step, tool, pulse), folded from its typed events.

The one fold of live state: the server's task rows and its event socket both send what
:func:`fold_live` made, and the panel shows it as it comes (it folds nothing itself)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from mercury_nb.runs.events import RunEvent


@dataclass(frozen=True)
class LiveState:
    """A running task now: its step and running tool (None: none yet, or between tools),
    when it started (None: not seen), ``at``, its latest sign of life (epoch seconds; a
    pulse's is when the silence it reports began), and ``text``, what the model has streamed
    in this step so far (redacted by the recorder; the final answer replaces it).
    ``approval`` is the question waiting for the user (a permission-asked not yet answered:
    ``request``, its number in this run as the permission edge numbered it for the event and
    the approver alike, with the asked event's tool, what, command, detail and suggested
    rule). ``progress``: the running tool's own word of how far it is (run_cells'
    ``cell 7/12``), until the tool ends."""

    step: int | None = None
    tool: str | None = None
    started: float | None = None
    at: float | None = None
    text: str = ""
    approval: dict[str, Any] | None = None
    progress: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"step": self.step, "tool": self.tool, "progress": self.progress,
                "started": self.started, "at": self.at, "text": self.text,
                "approval": self.approval}


def _asked(data: dict[str, Any]) -> dict[str, Any]:
    """The pending approval of a permission-asked event's data (``request``: 0 when the
    event carries no number, which no answer can name)."""
    def text(key: str) -> str | None:
        value = data.get(key)
        return value if isinstance(value, str) else None

    number = data.get("request_id")
    request = number if isinstance(number, int) and not isinstance(number, bool) else 0
    return {"request": request, "tool": text("tool") or "", "what": text("what") or "",
            "command": text("command"), "detail": text("detail") or "",
            "suggested_rule": text("suggested_rule"), "asked_in": text("asked_in")}


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else 0.0


def _step(value: Any, known: int | None) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else known


def fold_live(live: LiveState, event: RunEvent) -> LiveState:
    """``live`` after ``event``: a start sets ``started``, a step clears the tool and the
    text, a tool's start sets it and its end clears it (its progress with it), streamed text
    adds to ``text``, a
    permission-asked sets ``approval`` and its answer clears it; every event is a sign of
    life."""
    data = event.data
    match event.kind:
        case "task-started" | "resume":
            live = replace(live, started=event.at, approval=None)
        case "permission-asked":
            live = replace(live, approval=_asked(data))
        case "permission-answered":
            live = replace(live, approval=None)
        case "step-started":
            live = replace(live, step=_step(data.get("step"), live.step), tool=None,
                           progress="", text="")
        case "text-delta":
            text = data.get("text")
            live = replace(live, text=live.text + (text if isinstance(text, str) else ""))
        case "tool-started":
            name = data.get("name")
            live = replace(live, step=_step(data.get("step"), live.step),
                           tool=name if isinstance(name, str) else None, progress="")
        case "tool-progress":
            text = data.get("text")
            if data.get("name") == live.tool and isinstance(text, str):
                live = replace(live, progress=text)
        case "tool-finished":
            live = replace(live, tool=None, progress="")
        case _:
            pass
    silent = _number(data.get("silent_s")) if event.kind == "pulse" else 0.0
    return replace(live, at=event.at - silent)


def live_of(events: Iterable[RunEvent], live: LiveState | None = None) -> LiveState:
    """The live state after ``events`` (oldest first), from ``live`` (default: nothing seen)."""
    state = live or LiveState()
    for event in events:
        state = fold_live(state, event)
    return state
