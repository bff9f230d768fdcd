"""The stall watchdog's edge: real time into the pure watchdog, pulses out, stalled requests cut.

The rules (thresholds, once per silent window, a running command as progress, the texts) are
the pure :mod:`mercury_nb.contract.recovery.stall_watchdog`'s; this module feeds it and carries out
what it decides, and this docstring is the one description of that:

* A watch covers one model request (:meth:`StallWatch.request`) or one step's tool calls
  (:meth:`StallWatch.tools`). Each starts a fresh silent window and ticks the watchdog with
  ``time.monotonic`` (in milliseconds) while it lasts; nothing ticks between watches.
* Stream chunks (:meth:`StallWatch.on_chunk`) and command output are ``Activity``; a
  ``run_command`` starting and finishing are ``CommandStarted`` / ``CommandFinished``
  (reported through ``ToolContext.on_command``, see :meth:`StallWatch.tool_callbacks`). Every other
  tool counts as a running command while it runs: the agent's own tools are bounded by their
  own timeouts, so a tool is never cut as a stall (a command that prints nothing beyond its
  timeout is ended by that timeout).
* ``PulseDue`` emits a :class:`~mercury_nb.agent.events.Pulse` event (widget and plain text),
  carrying the watchdog state it was decided in so a live view can redraw its seconds.
* ``HardStall`` while waiting on the model shows its text as a
  :class:`~mercury_nb.agent.events.Notice` and cancels that request only (the stream: never
  the task, never a command); the watch then raises :class:`AttemptStalled`, which the loop
  routes as an interrupted attempt (retry or fallback through the provider policy, from the
  kept messages, partial text included), with the stall's text as the ledger reason. During
  tool calls nothing waits on the model, so a ``HardStall`` (possible only in the instant
  between two tools) is not acted on. A Stop (the task's own cancellation) is never taken for
  a stall.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, assert_never

from mercury_nb.agent.events import (
    AgentEvent,
    EventSink,
    Notice,
    Pulse,
    ToolFinished,
    ToolStarted,
)
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.recovery import stall_watchdog as wd
from mercury_nb.contract.spend import with_context
from mercury_nb.contract.turns.stream_assembly import StreamAssembly

COMMAND_TOOL = "run_command"
"""The tool that reports its own start and finish (with the real command line)."""

TICKS_PER_THRESHOLD = 4
MIN_TICK_S = 0.005
MAX_TICK_S = 1.0


class AttemptStalled(Exception):
    """The model request was cancelled by a hard stall; carries the watchdog's decision and
    (set by ``step.watched_step``) what the stream had assembled."""

    def __init__(self, stall: wd.HardStall) -> None:
        super().__init__(stall.text)
        self.stall = stall
        self.assembly = StreamAssembly()


def tick_interval_s(config: MercuryConfig) -> float:
    """How often a watch ticks: a quarter of the shorter threshold, within 5 ms and 1 s."""
    shortest_s = min(config.stall_soft_ms, config.effective_stall_hard_ms) / 1000
    return min(MAX_TICK_S, max(MIN_TICK_S, shortest_s / TICKS_PER_THRESHOLD))


class StallWatch:
    """One task's stall watchdog, fed by the loop, the stream and the tools."""

    def __init__(
        self,
        config: MercuryConfig,
        on_event: EventSink,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.on_event = on_event
        self.state = wd.WatchdogState()
        self._clock = clock
        self._interval_s = tick_interval_s(config)
        self._ticker: asyncio.TimerHandle | None = None
        self._scope: asyncio.Timeout | None = None
        self._stall: wd.HardStall | None = None
        self.context: int | None = None
        """How full the context window is (percent), as the loop last measured it: the
        pulse says so."""

    # --- observations ------------------------------------------------------------------
    def on_chunk(self) -> None:
        """A stream chunk arrived (``stream_step``'s ``on_activity``)."""
        self._observe(wd.Activity(self._now_ms(), "chunk"))

    def on_output(self, text: str) -> None:
        """A command printed something."""
        self._observe(wd.Activity(self._now_ms(), "tool_output"))

    def on_command(self, started: bool, command: str) -> None:
        """A command started (``started``) or finished."""
        now = self._now_ms()
        self._observe(wd.CommandStarted(now, command) if started else wd.CommandFinished(now))

    def tool_callbacks(self) -> dict[str, Any]:
        """The ``ToolContext`` fields through which run_command reports to this watch."""
        return {"on_output": self.on_output, "on_command": self.on_command}

    def tool_sink(self, sink: EventSink) -> EventSink:
        """``sink``, also telling the watch when a tool other than run_command runs."""

        def forward(event: AgentEvent) -> None:
            match event:
                case ToolStarted(name=name, summary=summary) if name != COMMAND_TOOL:
                    label = summary.replace(": ", " ", 1)
                    self._observe(wd.CommandStarted(self._now_ms(), label))
                case ToolFinished(name=name) if name != COMMAND_TOOL:
                    self._observe(wd.CommandFinished(self._now_ms()))
                case _:
                    pass
            sink(event)

        return forward

    # --- watches -----------------------------------------------------------------------
    @asynccontextmanager
    async def request(self, activity: str) -> AsyncIterator[None]:
        """Watch one model request; a hard stall cancels it and raises AttemptStalled."""
        self._begin(activity)
        scope = asyncio.timeout(None)
        try:
            async with scope:
                self._scope = scope
                try:
                    yield
                finally:
                    self._scope = None
        except TimeoutError:
            stall = self._stall
            if stall is not None and scope.expired():
                raise AttemptStalled(stall) from None
            raise
        finally:
            self._end()

    @asynccontextmanager
    async def tools(self) -> AsyncIterator[None]:
        """Watch one step's tool calls: pulses only, nothing is cut."""
        self._begin("running tools")
        try:
            yield
        finally:
            self._end()

    # --- internals ---------------------------------------------------------------------
    def _now_ms(self) -> float:
        return self._clock() * 1000.0

    def _begin(self, activity: str) -> None:
        self._end()
        self._stall = None
        self.state = wd.start_watchdog(self._now_ms(), wd.shorten(activity))
        self._schedule()

    def _end(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None

    def _schedule(self) -> None:
        self._ticker = asyncio.get_running_loop().call_later(self._interval_s, self._tick)

    def _tick(self) -> None:
        self._ticker = None
        self._observe(wd.Tick(self._now_ms()))
        if self._stall is None:
            self._schedule()

    def _observe(self, observation: wd.WatchdogObservation) -> None:
        self.state, decision = wd.step_watchdog(self.state, observation, self.config)
        match decision:
            case wd.Quiet():
                pass
            case wd.PulseDue(text=text, activity=activity, silent_s=silent, command=command):
                self.on_event(Pulse(with_context(text, self.context), activity, silent,
                                    command, watch=self.state, context=self.context))
            case wd.HardStall() as stall:
                self._hard_stall(stall)
            case _ as unreachable:
                assert_never(unreachable)

    def _hard_stall(self, stall: wd.HardStall) -> None:
        scope = self._scope
        if scope is None or self._stall is not None:
            return  # nothing waits on the model (see the module docstring)
        self._stall = stall
        self.on_event(Notice(stall.text, "stall"))
        scope.reschedule(asyncio.get_running_loop().time())
