"""A cell's view of its one Run: the registry that holds it, done-callbacks, Stop, ``--wait`` and
blocking runs."""

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
from mercury_nb.runs import PlannedRun, Run, launch, registry
from mercury_nb.runs.launch import started
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



def new_task_id() -> str:
    import uuid

    return uuid.uuid4().hex[:12]


def launched(run: Any, task_id: str | None = None,
             loop: asyncio.AbstractEventLoop | None = None) -> Run[TaskOutcome]:
    """The one Run of a test coroutine, as the runs layer makes it (registered, unrecorded)."""
    target = loop if loop is not None else asyncio.get_running_loop()
    planned = PlannedRun(task_id or new_task_id(), "t", MercuryConfig(), handle=None)
    return started(target.create_task(run()), planned)

async def test_started_task_is_held_until_done_then_kept_as_finished() -> None:
    release = asyncio.Event()
    task_id = new_task_id()

    async def run() -> TaskOutcome:
        await release.wait()
        return outcome(task_id)

    view = FakeView()
    record = scheduling.show(launched(run, task_id), view, attached=False)
    assert registry.latest() is record
    assert record in registry.running()
    assert registry.get(task_id) is record
    assert record.result is None
    release.set()
    result = await record.task
    await asyncio.sleep(0)  # the done-callbacks run on the next pass of the loop
    assert result.task_id == task_id and record.result == result
    assert record not in registry.running()
    assert registry.get(task_id) is record
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

    def spawn() -> Run[TaskOutcome]:
        return launch(planned, sink=sink, model=model)

    return spawn, stepping, events


async def test_stop_button_cancels_and_the_run_turns_it_into_an_outcome(tmp_path: Path) -> None:
    task_id = new_task_id()
    spawn, stepping, events = stalling_run(tmp_path, task_id)
    view = FakeView()
    record = scheduling.show(spawn(), view, attached=False)
    await asyncio.wait_for(stepping.wait(), timeout=30)
    assert view.stop is not None
    view.stop()  # what the Stop button calls
    await asyncio.wait({record.task}, timeout=30)  # (wait_for's timeout would cancel it)
    result = record.task.result()
    assert (result.task_id, result.status, result.verdict) == (task_id, "aborted", "aborted")
    assert record.result == result
    assert [e for e in events if isinstance(e, TaskFinished)] == [TaskFinished(result)]
    assert view.errors == [] and view.closed == 1


async def test_background_exception_is_shown_in_the_view() -> None:
    async def run() -> TaskOutcome:
        raise RuntimeError("boom in the loop")

    view = FakeView()
    record = scheduling.show(launched(run), view, attached=False)
    await asyncio.wait([record.task])
    assert len(view.errors) == 1
    assert "Traceback" in view.errors[0] and "RuntimeError: boom in the loop" in view.errors[0]
    assert view.closed == 1


async def test_attached_exception_is_raised_by_the_wait_not_shown_twice() -> None:
    async def run() -> TaskOutcome:
        raise ValueError("bad")

    view = FakeView()
    record = scheduling.show(launched(run), view, attached=True)
    with pytest.raises(ValueError, match="bad"):
        await WaitForTask(record)
    assert view.errors == []


async def test_cancel_before_the_run_starts_is_reported_and_wait_ends_quietly() -> None:
    async def run() -> TaskOutcome:
        raise AssertionError("never entered")

    view = FakeView()
    record = scheduling.show(launched(run), view, attached=True)
    record.stop()
    assert await WaitForTask(record) is None
    assert view.errors == [STOPPED_BEFORE_OUTCOME]
    assert record.result is None


async def test_wait_resolves_to_none_so_the_cell_shows_no_value() -> None:
    task_id = new_task_id()

    async def run() -> TaskOutcome:
        return outcome(task_id)

    record = scheduling.show(launched(run, task_id), FakeView(), attached=True)
    waiter = WaitForTask(record)
    assert task_id in repr(waiter)
    assert await waiter is None
    assert record.result is not None


async def test_interrupting_the_waiting_cell_cancels_the_task_into_its_outcome(
    tmp_path: Path,
) -> None:
    task_id = new_task_id()
    spawn, stepping, _ = stalling_run(tmp_path, task_id)
    record = scheduling.show(spawn(), FakeView(), attached=True)
    cell = asyncio.ensure_future(WaitForTask(record))  # like ipykernel's cell future
    await asyncio.wait_for(stepping.wait(), timeout=30)
    cell.cancel()  # what a kernel interrupt does to an async cell
    await asyncio.wait_for(asyncio.wait([cell]), timeout=30)
    assert record.result is not None
    assert (record.result.status, record.result.verdict) == ("aborted", "aborted")


def test_run_until_done_drives_the_task_without_a_running_loop() -> None:
    task_id = new_task_id()

    async def run() -> TaskOutcome:
        await asyncio.sleep(0)
        return outcome(task_id)

    view = FakeView()
    run_ = launched(run, task_id, loop=scheduling.cell_loop())
    result = scheduling.run_until_done(run_, view)
    assert result is not None and result.task_id == task_id
    assert registry.get(task_id) is run_ and view.closed == 1


def test_finished_registry_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "KEEP_FINISHED", 2)
    ids = [new_task_id() for _ in range(4)]
    for task_id in ids:
        async def run(task_id: str = task_id) -> TaskOutcome:
            return outcome(task_id)

        scheduling.run_until_done(launched(run, task_id, loop=scheduling.cell_loop()),
                                  FakeView())
    assert [registry.get(i) is not None for i in ids] == [False, False, True, True]
