"""The stall watchdog's edge (agent/stall_watch.py) on a fake clock: what it feeds the
pure watchdog, what it emits, and what it cuts."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mercury_nb.agent.events import AgentEvent, Notice, Pulse, ToolFinished, ToolStarted
from mercury_nb.agent.stall_watch import AttemptStalled, StallWatch, tick_interval_s
from mercury_nb.contract.config import MercuryConfig


class FakeClock:
    """Time set by the test; ``read`` is set each time the watch looks at it (a tick)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.read = asyncio.Event()

    def __call__(self) -> float:
        self.read.set()
        return self.now

    async def ticks(self, count: int) -> None:
        """Wait until the watch has read the clock ``count`` more times."""
        for _ in range(count):
            self.read.clear()
            await self.read.wait()


class Recorder:
    """An event sink that can wake a test when a given kind of event arrives."""

    def __init__(self) -> None:
        self.events: list[AgentEvent] = []
        self.arrived = asyncio.Event()

    def __call__(self, event: AgentEvent) -> None:
        self.events.append(event)
        self.arrived.set()

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


def watch_with(**kw: Any) -> tuple[StallWatch, FakeClock, Recorder]:
    clock, sink = FakeClock(), Recorder()
    config = MercuryConfig(**{"stall_soft_ms": 40, "stall_hard_ms": 80, **kw})
    return StallWatch(config, sink, clock=clock), clock, sink


@pytest.mark.parametrize(
    ("soft_ms", "hard_ms", "expected_s"),
    [
        pytest.param(180_000, None, 1.0, id="defaults-tick-each-second"),
        pytest.param(400, 2_000, 0.1, id="quarter-of-the-soft-threshold"),
        pytest.param(1_000, 200, 0.05, id="quarter-of-a-shorter-hard-threshold"),
        pytest.param(1, 2, 0.005, id="floor-5-ms"),
    ],
)
def test_tick_interval(soft_ms: int, hard_ms: int | None, expected_s: float) -> None:
    config = MercuryConfig(stall_soft_ms=soft_ms, stall_hard_ms=hard_ms)
    assert tick_interval_s(config) == pytest.approx(expected_s)


async def test_hard_stall_cancels_the_request_and_reports_it_once() -> None:
    watch, clock, sink = watch_with()
    never = asyncio.Event()
    with pytest.raises(AttemptStalled) as caught:
        async with watch.request("waiting for m"):
            clock.now += 150.0  # 2.5 minutes of silence by the next tick
            await never.wait()
    text = "Task stalled 2 minutes with no progress (was: waiting for m)"
    assert caught.value.stall.text == text
    assert sink.of(Notice) == [Notice(text, "stall")]
    assert sink.of(Pulse) == []  # past both thresholds at once: the hard stall wins


async def test_chunks_keep_a_request_alive() -> None:
    watch, clock, sink = watch_with()
    async with watch.request("waiting for m"):
        for _ in range(5):
            clock.now += 0.03  # under the soft threshold between chunks
            watch.on_chunk()
            await asyncio.sleep(0)
    assert sink.events == []
    assert watch.state.activity == "waiting for the model"


async def test_soft_threshold_pulses_once_and_names_the_activity() -> None:
    watch, clock, sink = watch_with(stall_hard_ms=10_000_000)
    async with watch.request("waiting for m"):
        clock.now += 5.0
        await sink.arrived.wait()
        sink.arrived.clear()
        clock.now += 5.0
        await clock.ticks(3)  # later ticks in the same window stay quiet
    [pulse] = sink.of(Pulse)
    assert (pulse.text, pulse.activity, pulse.silent_s) == (
        "waiting for m · 5 s", "waiting for m", 5)


async def test_the_pulse_says_how_full_the_context_is() -> None:
    watch, clock, sink = watch_with(stall_hard_ms=10_000_000)
    watch.context = 63  # as the loop measured the request it waits on
    async with watch.request("waiting for m"):
        clock.now += 5.0
        await sink.arrived.wait()
    [pulse] = sink.of(Pulse)
    assert (pulse.text, pulse.context) == ("waiting for m · 5 s · context 63%", 63)
    assert pulse.text_at(clock.now + 7.0) == "waiting for m · 12 s · context 63%"


async def test_a_running_tool_is_progress_and_is_never_cut() -> None:
    watch, clock, sink = watch_with()
    forward = watch.tool_sink(sink)
    async with watch.tools():
        forward(ToolStarted(step=1, name="read_file", summary="read_file: a.txt"))
        clock.now += 600.0
        await sink.arrived.wait()
        while not sink.of(Pulse):
            sink.arrived.clear()
            await sink.arrived.wait()
        forward(ToolFinished(step=1, name="read_file", ok=True, summary="read_file: a.txt"))
    [pulse] = sink.of(Pulse)
    assert (pulse.text, pulse.activity, pulse.silent_s, pulse.command) == (
        "running read_file a.txt · 600 s", "running read_file a.txt", 600,
        "read_file a.txt")
    assert sink.of(Notice) == []


async def test_run_command_reports_itself_through_the_tool_callbacks() -> None:
    watch, clock, sink = watch_with()
    extras = watch.tool_callbacks()
    forward = watch.tool_sink(sink)
    async with watch.tools():
        forward(ToolStarted(step=1, name="run_command", summary="run_command: make"))
        extras["on_command"](True, "make")
        clock.now += 1.0
        extras["on_output"]("compiling\n")
        assert [c.command for c in watch.state.commands] == ["make"]
        assert watch.state.window_start_ms == clock.now * 1000
        clock.now += 2.0
        extras["on_command"](False, "make")
        forward(ToolFinished(step=1, name="run_command", ok=True, summary="run_command: make"))
    assert watch.state.commands == ()
    assert watch.state.window_start_ms == clock.now * 1000


async def test_a_stop_is_never_taken_for_a_stall() -> None:
    watch, _, sink = watch_with(stall_hard_ms=10_000_000)
    entered = asyncio.Event()

    async def request() -> None:
        async with watch.request("waiting for m"):
            entered.set()
            await asyncio.Event().wait()

    task = asyncio.create_task(request())
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sink.events == []


async def test_a_timeout_of_the_request_itself_passes_through() -> None:
    watch, _, _ = watch_with(stall_hard_ms=10_000_000)
    with pytest.raises(TimeoutError):
        async with watch.request("waiting for m"):
            raise TimeoutError("the provider's own timeout")
