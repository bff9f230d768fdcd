"""Runs agent tasks as asyncio Tasks on the kernel's loop, shown in their cell, with ``--wait``.

How a ``%%mercury`` cell runs, and why:

* **Background (default).** Inside ipykernel a cell executes while the kernel's asyncio loop
  is running, so the magic creates an ``asyncio.Task`` on that loop and returns at once;
  the kernel stays responsive and the Stop button (a comm message) cancels the task.
  The task's one :class:`~mercury_nb.runs.registry.Run` is held by the runs layer's registry
  (:mod:`~mercury_nb.runs.registry`); the cell's view subscribes to it.
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
from collections.abc import Callable, Generator
from functools import partial
from typing import Any, cast

from mercury_nb.contract.outcome import TaskOutcome
from mercury_nb.runs.registry import Run
from mercury_nb.ui.live import RunView

STOPPED_BEFORE_OUTCOME = "Stopped — the task was cancelled before it could report an outcome."


def show(run: Run[TaskOutcome], view: RunView, *, attached: bool) -> Run[TaskOutcome]:
    """The cell's view subscribes to ``run``: its Stop stops the run, and the run's end
    closes the view (with the error of a task that raised, unless the cell ``attached``
    awaits it and gets the exception itself)."""
    view.bind_stop(run.stop)
    run.views.append(view)
    run.on_done(partial(_ended, view, attached))
    return run


def _ended(view: RunView, attached: bool, run: Run[TaskOutcome]) -> None:
    task = run.task
    try:
        if task.cancelled():
            view.show_error(STOPPED_BEFORE_OUTCOME)
            return
        error = task.exception()  # also marks it retrieved
        if error is not None and not attached:
            # Attached cells get the exception raised by their await instead.
            view.show_error("".join(traceback.format_exception(error)))
    finally:
        view.close()


async def wait(run: Run[TaskOutcome]) -> None:
    """Await the task for a ``--wait`` cell; resolves to ``None`` so the cell shows no Out.

    A task cancelled by Stop ends quietly (its view said so); an interrupt of the cell
    itself is passed on to the task, which the loop turns into an ``aborted`` outcome.
    """
    try:
        await run.task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if run.task.cancelled() and (current is None or current.cancelling() == 0):
            return
        raise


class WaitForTask:
    """What ``%%mercury --wait`` returns inside a running loop: the cell awaits it."""

    def __init__(self, run: Run[TaskOutcome]) -> None:
        self.run = run

    def __await__(self) -> Generator[Any, None, None]:
        return wait(self.run).__await__()

    def __repr__(self) -> str:
        return (
            f"<mercury task {self.run.task_id} running in the background; "
            "await this object to wait for it>"
        )


def run_until_done(run: Run[TaskOutcome], view: RunView) -> TaskOutcome | None:
    """No loop is running: drive the task (created on :func:`cell_loop`) to the end there.

    Ctrl-C cancels the task and waits for its ``aborted`` outcome. An exception of the
    task is raised here, in the cell.
    """
    loop = cell_loop()
    show(run, view, attached=True)
    try:
        loop.run_until_complete(wait(run))
    except KeyboardInterrupt:
        run.stop()
        loop.run_until_complete(wait(run))
    return run.result


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
