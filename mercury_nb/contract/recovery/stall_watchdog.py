"""The stall watchdog: from timestamps alone, when to pulse and when to abort a stalled attempt.

What it does, exactly (this docstring is the one description of its behaviour):

* Time is an input (``now_ms`` on every observation); the module reads no clock.
* The *silent window* starts at the last activity: a stream chunk, a tool output, a command
  starting or a command finishing (``Activity``, ``CommandStarted``, ``CommandFinished``).
  Every activity resets both thresholds and re-arms the pulse.
* Soft threshold (``config.stall_soft_ms``, default 3 min): the first ``Tick`` at or past it
  returns ``PulseDue`` with ``<activity> · N s`` (``waiting for the model · 8 s``; N = whole
  seconds of silence, a stream that stopped mid-reply included: the model is still what it
  waits for). It fires once per silent window; later ticks in the same window are ``Quiet``.
* While a command is running, the running command counts as progress: the pulse reads
  ``running <cmd> · N s`` (N = whole seconds the command has run, ``<cmd>``
  shortened to one line of at most 48 characters), and the hard threshold never fires. A
  command that prints nothing beyond its own timeout is ended by that timeout, elsewhere;
  its ``CommandFinished`` then starts a fresh silent window.
* Hard threshold (``config.effective_stall_hard_ms``: default 8 min; soft + 5 min when only
  the soft value is set): the first ``Tick`` at or past it with no command running returns
  ``HardStall``. The loop MUST then abort the attempt into the resume machinery (retry or
  fallback, continuing from the checkpoint) and report ``HardStall.text``:
  ``Task stalled N minutes with no progress (was: <activity>)``. The watchdog never ends a
  task by itself and never silently: it only decides, once per silent window.
* If one tick is already past both thresholds, ``HardStall`` wins over ``PulseDue``.
* Commands may overlap: ``CommandFinished`` ends the oldest running one and the pulse names
  the oldest still running. A state built with no start time (``WatchdogState()``) starts
  its window at the first observation; ``start_watchdog(now_ms)`` starts it explicitly.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal, assert_never

from mercury_nb.contract.config import MercuryConfig

IDLE_ACTIVITY = "waiting for the model"
"""What the watchdog says it is waiting on before any activity was observed."""

DEFAULT_ACTIVITY_LABELS: dict[str, str] = {
    "chunk": IDLE_ACTIVITY,
    "tool_output": "reading tool output",
}
"""Labels used when an ``Activity`` comes with an empty label."""

COMMAND_DISPLAY_CHARS = 48
"""Longest command (or activity label) shown in a pulse; longer ones end in ``…``."""


# --- observations ---------------------------------------------------------------------
@dataclass(frozen=True)
class Tick:
    """Time passed; nothing else happened."""

    now_ms: float


@dataclass(frozen=True)
class Activity:
    """A stream chunk or a tool output arrived; ``label`` says what the agent is doing."""

    now_ms: float
    kind: Literal["chunk", "tool_output"]
    label: str = ""


@dataclass(frozen=True)
class CommandStarted:
    """A shell command started (``run_command``)."""

    now_ms: float
    command: str


@dataclass(frozen=True)
class CommandFinished:
    """The oldest running command finished (any exit, timeout included)."""

    now_ms: float


WatchdogObservation = Tick | Activity | CommandStarted | CommandFinished


# --- decisions ------------------------------------------------------------------------
@dataclass(frozen=True)
class Quiet:
    """Nothing to show or do."""


@dataclass(frozen=True)
class PulseDue:
    """Show this live pulse in the widget and in plain text; ``activity`` is what it waits
    on, ``silent_s`` the whole seconds of silence (or of the running ``command``)."""

    text: str
    activity: str = field(default="", compare=False)
    silent_s: int = field(default=0, compare=False)
    command: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class HardStall:
    """Abort the attempt into resume (retry/fallback from the checkpoint) and report ``text``."""

    minutes: int
    was: str

    @property
    def text(self) -> str:
        return f"Task stalled {self.minutes} minutes with no progress (was: {self.was})"


WatchdogDecision = Quiet | PulseDue | HardStall


# --- state ----------------------------------------------------------------------------
@dataclass(frozen=True)
class RunningCommand:
    """A command the watchdog counts as progress while it runs."""

    command: str
    started_ms: float


@dataclass(frozen=True)
class WatchdogState:
    """Where the current silent window began and what has fired in it.

    ``window_start_ms`` is ``None`` until the first observation, which starts the window.
    """

    window_start_ms: float | None = None
    activity: str = IDLE_ACTIVITY
    commands: tuple[RunningCommand, ...] = ()
    pulsed: bool = False
    hard_stalled: bool = False


def start_watchdog(now_ms: float, activity: str = IDLE_ACTIVITY) -> WatchdogState:
    """A watchdog whose first silent window starts now (at the start of an attempt)."""
    return WatchdogState(window_start_ms=now_ms, activity=activity)


def shorten(text: str, limit: int = COMMAND_DISPLAY_CHARS) -> str:
    """One line, whitespace collapsed, at most ``limit`` characters (ending in ``…``)."""
    lines = text.strip().splitlines()
    first = " ".join(lines[0].split()) if lines else ""
    if len(lines) > 1:
        first += " …"
    if len(first) <= limit:
        return first
    return first[: limit - 1].rstrip() + "…"


def step_watchdog(
    state: WatchdogState, observation: WatchdogObservation, config: MercuryConfig
) -> tuple[WatchdogState, WatchdogDecision]:
    """Advance the watchdog by one observation; see the module docstring for the rules."""
    match observation:
        case Activity(now_ms=now, kind=kind, label=label):
            activity = shorten(label) or DEFAULT_ACTIVITY_LABELS[kind]
            return _new_window(now, activity, state.commands), Quiet()
        case CommandStarted(now_ms=now, command=command):
            running = (*state.commands, RunningCommand(command, now))
            return _new_window(now, state.activity, running), Quiet()
        case CommandFinished(now_ms=now):
            return _new_window(now, state.activity, state.commands[1:]), Quiet()
        case Tick(now_ms=now):
            return _on_tick(state, now, config)
        case _ as unreachable:
            assert_never(unreachable)


def _new_window(now: float, activity: str, commands: tuple[RunningCommand, ...]) -> WatchdogState:
    """Any activity: a fresh silent window, both thresholds reset, the pulse re-armed."""
    return WatchdogState(window_start_ms=now, activity=activity, commands=commands)


def _on_tick(
    state: WatchdogState, now: float, config: MercuryConfig
) -> tuple[WatchdogState, WatchdogDecision]:
    if state.window_start_ms is None:
        return replace(state, window_start_ms=now), Quiet()
    silent_ms = max(0.0, now - state.window_start_ms)
    if (
        not state.commands
        and not state.hard_stalled
        and silent_ms >= config.effective_stall_hard_ms
    ):
        stalled = replace(state, hard_stalled=True, pulsed=True)
        return stalled, HardStall(minutes=int(silent_ms // 60_000), was=state.activity)
    if not state.pulsed and not state.hard_stalled and silent_ms >= config.stall_soft_ms:
        return replace(state, pulsed=True), pulse_of(state, now)
    return state, Quiet()


def pulse_of(state: WatchdogState, now_ms: float) -> PulseDue:
    """The pulse for ``now_ms``: its line and its typed fields."""
    text = pulse_text(state, now_ms)
    if state.commands:
        oldest = state.commands[0]
        ran_s = int(max(0.0, now_ms - oldest.started_ms) // 1000)
        return PulseDue(text, f"running {shorten(oldest.command)}", ran_s, oldest.command)
    start = now_ms if state.window_start_ms is None else state.window_start_ms
    return PulseDue(text, state.activity, int(max(0.0, now_ms - start) // 1000))


def pulse_text(state: WatchdogState, now_ms: float) -> str:
    """The live pulse line for ``now_ms``; a view redraws it between decisions from the state
    the pulse was decided in (the seconds keep growing while nothing happens)."""
    if state.commands:
        oldest = state.commands[0]
        ran_s = int(max(0.0, now_ms - oldest.started_ms) // 1000)
        return f"running {shorten(oldest.command)} · {ran_s} s"
    start = now_ms if state.window_start_ms is None else state.window_start_ms
    silent_s = int(max(0.0, now_ms - start) // 1000)
    return f"{state.activity} · {silent_s} s"
