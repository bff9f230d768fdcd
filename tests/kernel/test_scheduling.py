"""Scheduling on the running loop: registry, done-callbacks, Stop, ``--wait`` and blocking runs."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mercury_nb.agent.events import StepStarted, TaskFinished
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.outcome import TaskOutcome
from mercury_nb.kernel import scheduling
from mercury_nb.kernel.scheduling import STOPPED_BEFORE_OUTCOME, WaitForTask
from mercury_nb.runs import PlannedRun, launch
from mercury_nb.testing import ScriptedModel, Stall, Turn


class FakeView:
    """Records what the scheduler asks of a view."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.closed = 0
        self.stop: Callable[[], None] | None = None

    def on_event(self, event: object) -> None:
        raise AssertionError("the scheduler never sends events itself")

    def bind_stop(self, stop: Callable[[], None]) -> None:
        self.stop = stop

    def show_error(self, text: str) -> None:
        self.errors.append(text)

    def close(self) -> None:
        self.closed += 1


def outcome(task_id: str, status: str = "completed") -> TaskOutcome:
    return TaskOutcome(task_id=task_id, task="t", status=status, verdict=None,  # type: ignore[arg-type]
                       answer=None, banner=f"banner {status}")



def spawning(run: Any) -> Any:
    """A spawn (what the magic passes: the runs layer's launch) for a test coroutine."""
    return lambda loop: loop.create_task(run())

async def test_started_task_is_held_until_done_then_kept_as_finished() -> None:
    release = asyncio.Event()
    task_id = scheduling.new_task_id()

    async def run() -> TaskOutcome:
        await release.wait()
        return outcome(task_id)

    view = FakeView()
    record = scheduling.start(spawning(run), task_id=task_id, view=view, attached=False)
    assert scheduling.latest() is record
    assert record in scheduling.running()
    assert scheduling.get(task_id) is record
    assert record.outcome is None
    release.set()
    result = await record.task
    assert result.task_id == task_id and record.outcome == result
    assert record not in scheduling.running()
    assert scheduling.get(task_id) is record
    assert (view.errors, view.closed) == ([], 1)


def stalling_run(tmp_path: Path, task_id: str) -> tuple[Any, asyncio.Event, list[object]]:
    """A spawn of a real run (the runs layer's launch, unrecorded) whose model goes silent
    for ten minutes at its first step, the event that says the step began, and its events."""
    model = ScriptedModel([Turn(text="never arrives", fault=Stall(seconds=600))])
    config = MercuryConfig(workdir=tmp_path, home=tmp_path / "home", model=model.name)
    planned = PlannedRun(task_id, "Wait for the model.", config, handle=None)
    stepping = asyncio.Event()
    events: list[object] = []

    def sink(event: object) -> None:
        events.append(event)
        if isinstance(event, StepStarted):
            stepping.set()

    def spawn(loop: asyncio.AbstractEventLoop) -> asyncio.Task[TaskOutcome]:
        return launch(planned, sink=sink, loop=loop, model=model).task

    return spawn, stepping, events


async def test_stop_button_cancels_and_the_run_turns_it_into_an_outcome(tmp_path: Path) -> None:
    task_id = scheduling.new_task_id()
    spawn, stepping, events = stalling_run(tmp_path, task_id)
    view = FakeView()
    record = scheduling.start(spawn, task_id=task_id, view=view, attached=False)
    await asyncio.wait_for(stepping.wait(), timeout=30)
    assert view.stop is not None
    view.stop()  # what the Stop button calls
    await asyncio.wait({record.task}, timeout=30)  # (wait_for's timeout would cancel it)
    result = record.task.result()
    assert (result.task_id, result.status, result.verdict) == (task_id, "aborted", "aborted")
    assert record.outcome == result
    assert [e for e in events if isinstance(e, TaskFinished)] == [TaskFinished(result)]
    assert view.errors == [] and view.closed == 1


async def test_background_exception_is_shown_in_the_view() -> None:
    async def run() -> TaskOutcome:
        raise RuntimeError("boom in the loop")

    view = FakeView()
    record = scheduling.start(spawning(run), task_id=scheduling.new_task_id(), view=view,
                              attached=False)
    await asyncio.wait([record.task])
    assert len(view.errors) == 1
    assert "Traceback" in view.errors[0] and "RuntimeError: boom in the loop" in view.errors[0]
    assert view.closed == 1


async def test_attached_exception_is_raised_by_the_wait_not_shown_twice() -> None:
    async def run() -> TaskOutcome:
        raise ValueError("bad")

    view = FakeView()
    record = scheduling.start(spawning(run), task_id=scheduling.new_task_id(), view=view,
                              attached=True)
    with pytest.raises(ValueError, match="bad"):
        await WaitForTask(record)
    assert view.errors == []


async def test_cancel_before_the_run_starts_is_reported_and_wait_ends_quietly() -> None:
    async def run() -> TaskOutcome:
        raise AssertionError("never entered")

    view = FakeView()
    record = scheduling.start(spawning(run), task_id=scheduling.new_task_id(), view=view,
                              attached=True)
    record.stop()
    assert await WaitForTask(record) is None
    assert view.errors == [STOPPED_BEFORE_OUTCOME]
    assert record.outcome is None


async def test_wait_resolves_to_none_so_the_cell_shows_no_value() -> None:
    task_id = scheduling.new_task_id()

    async def run() -> TaskOutcome:
        return outcome(task_id)

    record = scheduling.start(spawning(run), task_id=task_id, view=FakeView(), attached=True)
    waiter = WaitForTask(record)
    assert task_id in repr(waiter)
    assert await waiter is None
    assert record.outcome is not None


async def test_interrupting_the_waiting_cell_cancels_the_task_into_its_outcome(
    tmp_path: Path,
) -> None:
    task_id = scheduling.new_task_id()
    spawn, stepping, _ = stalling_run(tmp_path, task_id)
    record = scheduling.start(spawn, task_id=task_id, view=FakeView(), attached=True)
    cell = asyncio.ensure_future(WaitForTask(record))  # like ipykernel's cell future
    await asyncio.wait_for(stepping.wait(), timeout=30)
    cell.cancel()  # what a kernel interrupt does to an async cell
    await asyncio.wait_for(asyncio.wait([cell]), timeout=30)
    assert record.outcome is not None
    assert (record.outcome.status, record.outcome.verdict) == ("aborted", "aborted")


def test_run_until_done_drives_the_task_without_a_running_loop() -> None:
    task_id = scheduling.new_task_id()

    async def run() -> TaskOutcome:
        await asyncio.sleep(0)
        return outcome(task_id)

    view = FakeView()
    result = scheduling.run_until_done(spawning(run), task_id=task_id, view=view)
    assert result is not None and result.task_id == task_id
    assert scheduling.get(task_id) is not None and view.closed == 1


def test_finished_registry_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scheduling, "KEEP_FINISHED", 2)
    ids = [scheduling.new_task_id() for _ in range(4)]
    for task_id in ids:
        async def run(task_id: str = task_id) -> TaskOutcome:
            return outcome(task_id)

        scheduling.run_until_done(spawning(run), task_id=task_id, view=FakeView())
    assert [scheduling.get(i) is not None for i in ids] == [False, False, True, True]
