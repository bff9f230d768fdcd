"""Pure view model of a running task: folds agent events into a StatusView and its status line."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

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
    TurnEnded,
)
from mercury_nb.contract.outcome import TaskOutcome
from mercury_nb.contract.spend import Spend, context_text, footer_text, spend_text
from mercury_nb.contract.stream_text import StreamText, add_text, flush_text

TAIL_CHARS = 4000
"""Characters of the model's streamed text kept for the live view (the newest)."""

STREAM_CHARS = 16_000
"""Most characters of one step's streamed text the live view takes in (it is redacted as a
whole at every piece, so this bounds that work; the final answer shows the rest)."""

NOTICES_KEPT = 5
"""Most recent notices kept for the live view."""

SEPARATOR = " · "

STARTING = "working on it…"
"""What every view says before the first step, after the model's name."""

ATTACHED = "attached {names}"
"""The start line's part naming the kernel variables ``@name`` attached."""

KERNEL_TOOL = "run_in_kernel"
KERNEL_PULSE = "running in your kernel · {seconds} s"
"""The live status while run_in_kernel runs, its seconds growing."""

PROGRESS_PULSE = "{progress} · {seconds} s"
"""The live status of a tool call that reports how far it is (run_cells: ``cell 7/12 · 34
s``), its seconds those of the call, growing."""


@dataclass(frozen=True)
class StatusView:
    """Everything the live status shows, as of the last folded event.

    Times are monotonic seconds handed in by the caller; nothing here reads a clock.
    """

    task_id: str = ""
    model: str = ""
    step: int = 0
    max_steps: int = 0
    tool: str | None = None
    tool_summary: str = ""
    tool_started_at: float | None = None
    tool_progress: str = ""
    """How far the running tool call says it is (``cell 7/12``); empty until it says."""
    attached: tuple[str, ...] = ()
    """The kernel variables ``@name`` attached to the first request."""
    tools_run: int = 0
    tool_failures: int = 0
    notices: tuple[str, ...] = ()
    tail: str = ""
    """The model's text streamed in this step so far, safe to show (redacted as a whole and
    handed out word by word: :mod:`mercury_nb.contract.stream_text`), its newest
    :data:`TAIL_CHARS`."""
    tail_cut: bool = False
    """Whether older text of the step was dropped from ``tail``."""
    stream: StreamText = field(default_factory=StreamText)
    pulse: Pulse | None = None
    """The stall watchdog's pulse, until the next sign of progress (its seconds are redrawn
    for the time a status line is drawn at)."""
    started_at: float | None = None
    finished_at: float | None = None
    outcome: TaskOutcome | None = None
    spend: Spend = field(default_factory=Spend)
    """What the task had spent when the current step started (tokens, estimated cost)."""
    context: int | None = None
    """How full the current step's request fills the context window, in percent."""

    @property
    def last_notice(self) -> str | None:
        return self.notices[-1] if self.notices else None

    @property
    def finished(self) -> bool:
        return self.outcome is not None


def fold(view: StatusView, event: AgentEvent, now: float) -> StatusView:
    """The view after ``event`` arrived at ``now``: an event this view shows nothing
    particular for (a turn's end, a pause, which the banner explains; a kind added later) is
    a sign of progress and ends the pulse, nothing more."""
    if view.started_at is None:
        view = replace(view, started_at=now)
    if view.pulse is not None and not isinstance(event, Pulse | Notice | TurnEnded):
        view = replace(view, pulse=None)  # progress again: the pulse is over
    match event:
        case TaskStarted(task_id=task_id, model=model, max_steps=max_steps, attached=attached):
            return replace(view, task_id=task_id, model=model, max_steps=max_steps,
                           attached=attached)
        case StepStarted(step=step, max_steps=max_steps, model=model, tokens=tokens,
                         cost_usd=usd, unpriced=unpriced, context=context):
            return replace(
                view, step=step, max_steps=max_steps, model=model, tool=None, tool_summary="",
                tail="", tail_cut=False, stream=StreamText(), spend=Spend(tokens, usd, unpriced),
                context=context,
            )
        case TextDelta(text=text):
            stream, shown = add_text(view.stream, text, (), STREAM_CHARS)
            return _with_text(replace(view, stream=stream), shown)
        case ToolStarted(step=step, name=name, summary=summary):
            stream, rest = flush_text(view.stream, ())  # the reply's text is whole now
            view = _with_text(replace(view, stream=stream), rest)
            return replace(view, step=max(view.step, step), tool=name, tool_summary=summary,
                           tool_started_at=now, tool_progress="")
        case ToolProgress(name=name, text=text):
            return replace(view, tool_progress=text) if name == view.tool else view
        case ToolFinished(ok=ok):
            return replace(
                view,
                tool=None,
                tool_summary="",
                tools_run=view.tools_run + 1,
                tool_failures=view.tool_failures + (0 if ok else 1),
            )
        case Notice(text=text):
            return replace(view, notices=(*view.notices, text)[-NOTICES_KEPT:])
        case Pulse():
            return replace(view, pulse=event)
        case TaskFinished(outcome=outcome):
            return replace(view, outcome=outcome, finished_at=now, tool=None, tool_summary="")
        case _:
            return view


def _with_text(view: StatusView, shown: str) -> StatusView:
    if not shown:
        return view
    tail = view.tail + shown
    cut = len(tail) > TAIL_CHARS
    return replace(view, tail=tail[-TAIL_CHARS:], tail_cut=view.tail_cut or cut)


def tool_detail(name: str, summary: str) -> str:
    """A tool call's summary without its ``name:`` (``run_command: pytest`` -> ``pytest``)."""
    return summary.removeprefix(f"{name}:").strip() if summary != name else ""


def tool_label(name: str, summary: str) -> str:
    """``create_file a.py``: the tool name and what it acts on, once each."""
    detail = tool_detail(name, summary)
    return f"{name} {detail}" if detail else name


def elapsed_s(view: StatusView, now: float) -> int:
    """Whole seconds since the task started; frozen once it finished."""
    if view.started_at is None:
        return 0
    end = view.finished_at if view.finished_at is not None else now
    return max(0, int(end - view.started_at))


def _steps(count: int) -> str:
    return f"{count} step" if count == 1 else f"{count} steps"


def start_text(model: str, attached: tuple[str, ...] = ()) -> str:
    """``<model> · working on it…``: the start of a task, the same in every view and cell;
    ``· attached @df, @sales`` when ``@name`` attached kernel variables."""
    text = f"{model}{SEPARATOR}{STARTING}" if model else STARTING
    if attached:
        text += SEPARATOR + ATTACHED.format(names=", ".join(f"@{name}" for name in attached))
    return text


def outcome_spend(outcome: TaskOutcome) -> Spend:
    """What a finished task spent, from its outcome."""
    tokens = sum(used.total_tokens for used in outcome.usage.values())
    return Spend(tokens, outcome.cost_usd, tuple(outcome.unpriced))


def footer(outcome: TaskOutcome) -> str:
    """The banner's footer, ``4 steps · 12.3k tokens · ~$0.004`` (empty: no tokens reported)."""
    return footer_text(outcome.steps, outcome_spend(outcome))


def status_line(view: StatusView, now: float) -> str:
    """One line: ``step 3/75 · run_command · 12s · 8.1k tokens · ~$0.002 · context 63%``
    while running (what was spent before the step, once a provider reported tokens; the
    context once a window is known); while the stall watchdog's pulse shows, ``step 3/75 ·
    <pulse, its seconds as of now>`` instead (it names the context itself); once finished,
    ``completed · 4 steps · 12.3k tokens · ~$0.004 · 12s``."""
    elapsed = f"{elapsed_s(view, now)}s"
    if view.outcome is not None:
        spent = spend_text(outcome_spend(view.outcome))
        ended = (view.outcome.status, _steps(view.outcome.steps), spent, elapsed)
        return SEPARATOR.join(part for part in ended if part)
    if view.step == 0:
        return SEPARATOR.join((start_text(view.model, view.attached), elapsed))
    budget = f"step {view.step}/{view.max_steps}" if view.max_steps else f"step {view.step}"
    if view.tool == KERNEL_TOOL and view.tool_started_at is not None:
        seconds = max(0, int(now - view.tool_started_at))
        return SEPARATOR.join((budget, KERNEL_PULSE.format(seconds=seconds)))
    if view.tool_progress and view.tool_started_at is not None:
        seconds = max(0, int(now - view.tool_started_at))
        return SEPARATOR.join((budget, PROGRESS_PULSE.format(progress=view.tool_progress,
                                                             seconds=seconds)))
    if view.pulse is not None:  # the pulse carries the growing count: one number, not two
        return SEPARATOR.join((budget, view.pulse.text_at(now)))
    context = context_text(view.context) if view.context is not None else ""
    parts = (budget, view.tool or "thinking", elapsed, spend_text(view.spend), context)
    return SEPARATOR.join(part for part in parts if part)
