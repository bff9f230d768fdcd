"""Runs agent tasks as asyncio Tasks on the kernel's running loop, with a registry and ``--wait``.

How a ``%%mercury`` cell runs, and why:

* **Background (default).** Inside ipykernel a cell executes while the kernel's asyncio loop
  is running, so the magic creates an ``asyncio.Task`` on that loop and returns at once;
  the kernel stays responsive and the Stop button (a comm message) cancels the task.
  Tasks are held in a module registry until done (asyncio keeps only weak references).
  Later output goes into what the cell displayed at cell time (the widget, or a display
  handle in text mode), never into whichever cell happens to run later. Headless clients
  (nbclient, nbval) only record messages of the cell they are executing, so notebooks run
  headless should use ``--wait``.
* **``--wait``.** A magic cannot block the loop it runs on, and IPython does not await a
  magic's return value. So the extension adds an input transformer (``input_transformers_post``)
  that turns the transformed cell ``get_ipython().run_cell_magic('mercury', '--wait …', …)``
  into ``await get_ipython().run_cell_magic(...)``. That makes the cell a top-level-await
  cell: ipykernel runs it as a coroutine on its own loop, and the magic returns a
  :class:`WaitForTask` that the cell awaits. The loop keeps running (ipykernel 7 even
  dispatches widget comm messages during an async cell, so Stop works), nbclient/nbval see
  every output inside the cell, and a kernel interrupt cancels the awaited task, which ends
  ``aborted``. Rejected alternatives: a worker thread with its own loop (widgets, output
  routing and cancellation all cross threads), nested loops (``nest_asyncio`` patches
  asyncio globally), and re-entering ``run_cell`` from the magic.
* **No running loop** (terminal IPython, a plain ``InteractiveShell``): nothing would drive
  a background task or receive its output, so the task runs to completion on IPython's
  persistent asyncio loop; Ctrl-C cancels it and it ends ``aborted``.
"""

from __future__ import annotations

import asyncio
import traceback
import uuid
from collections import OrderedDict
from collections.abc import Callable, Generator
from dataclasses import dataclass
from functools import partial
from typing import Any, cast

from mercury_nb.contract.outcome import TaskOutcome
from mercury_nb.ui.live import RunView

KEEP_FINISHED = 50
"""Finished tasks kept in the registry (for ``await`` and a later ``%mercury tasks``)."""

STOPPED_BEFORE_OUTCOME = "Stopped — the task was cancelled before it could report an outcome."

Spawn = Callable[[asyncio.AbstractEventLoop], "asyncio.Task[TaskOutcome]"]
"""Creates the task on a loop (``mercury_nb.runs.launch``, which also registers it for stop
requests from other processes)."""


@dataclass
class RunningTask:
    """One launched task: the asyncio Task, its view, and whether its cell waits for it."""

    task_id: str
    task: asyncio.Task[TaskOutcome]
    view: RunView
    attached: bool

    def stop(self) -> None:
        """Cancel the task; the loop turns that into an ``aborted`` outcome, files kept."""
        self.task.cancel()

    @property
    def outcome(self) -> TaskOutcome | None:
        """The outcome once the task finished normally, else ``None``."""
        if self.task.done() and not self.task.cancelled() and self.task.exception() is None:
            return self.task.result()
        return None


_running: dict[str, RunningTask] = {}
_finished: OrderedDict[str, RunningTask] = OrderedDict()
_latest: RunningTask | None = None


def new_task_id() -> str:
    return uuid.uuid4().hex[:12]


def running() -> tuple[RunningTask, ...]:
    """Tasks still running, oldest first."""
    return tuple(_running.values())


def get(task_id: str) -> RunningTask | None:
    """A running or recently finished task by id."""
    return _running.get(task_id) or _finished.get(task_id)


def latest() -> RunningTask | None:
    """The task launched last in this process."""
    return _latest


def start(
    spawn: Spawn,
    *,
    task_id: str,
    view: RunView,
    attached: bool,
    loop: asyncio.AbstractEventLoop | None = None,
) -> RunningTask:
    """Create the task on ``loop`` (default: the running loop) with ``spawn`` (the runs
    layer's launch), register it, wire Stop."""
    global _latest
    target = loop if loop is not None else asyncio.get_running_loop()
    task = spawn(target)
    record = RunningTask(task_id=task_id, task=task, view=view, attached=attached)
    _running[task_id] = record
    _latest = record
    task.add_done_callback(partial(_on_done, record))
    view.bind_stop(record.stop)
    return record


def _on_done(record: RunningTask, task: asyncio.Task[TaskOutcome]) -> None:
    _running.pop(record.task_id, None)
    _finished[record.task_id] = record
    while len(_finished) > KEEP_FINISHED:
        _finished.popitem(last=False)
    try:
        if task.cancelled():
            record.view.show_error(STOPPED_BEFORE_OUTCOME)
            return
        error = task.exception()  # also marks it retrieved
        if error is not None and not record.attached:
            # Attached cells get the exception raised by their await instead.
            record.view.show_error("".join(traceback.format_exception(error)))
    finally:
        record.view.close()


async def wait(record: RunningTask) -> None:
    """Await the task for a ``--wait`` cell; resolves to ``None`` so the cell shows no Out.

    A task cancelled by Stop ends quietly (its view said so); an interrupt of the cell
    itself is passed on to the task, which the loop turns into an ``aborted`` outcome.
    """
    try:
        await record.task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if record.task.cancelled() and (current is None or current.cancelling() == 0):
            return
        raise


class WaitForTask:
    """What ``%%mercury --wait`` returns inside a running loop: the cell awaits it."""

    def __init__(self, record: RunningTask) -> None:
        self.record = record

    def __await__(self) -> Generator[Any, None, None]:
        return wait(self.record).__await__()

    def __repr__(self) -> str:
        return (
            f"<mercury task {self.record.task_id} running in the background; "
            "await this object to wait for it>"
        )


def run_until_done(spawn: Spawn, *, task_id: str, view: RunView) -> TaskOutcome | None:
    """No loop is running: drive the task to the end on IPython's persistent loop.

    Ctrl-C cancels the task and waits for its ``aborted`` outcome. An exception of the
    task is raised here, in the cell.
    """
    loop = cell_loop()
    record = start(spawn, task_id=task_id, view=view, attached=True, loop=loop)
    try:
        loop.run_until_complete(wait(record))
    except KeyboardInterrupt:
        record.stop()
        loop.run_until_complete(wait(record))
    return record.outcome


def cell_loop() -> asyncio.AbstractEventLoop:
    """IPython's persistent asyncio loop, for a cell that runs with no loop running."""
    from IPython.core import async_helpers

    get_loop = cast(Callable[[], asyncio.AbstractEventLoop], async_helpers.get_asyncio_loop)
    return get_loop()


def running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
