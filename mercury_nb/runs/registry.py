"""A run of this process (:class:`Run`, the one wrapper of its task) and the one registry of them.

Each :class:`Run` is added when it is launched (:func:`~mercury_nb.runs.launch.started`)
and moves to the recently finished ones when its task is done (asyncio keeps only weak
references to tasks, so this also keeps them alive). The kernel's ``%mercury`` view, the
stop poller and the shutdown paths all read this registry; none keeps its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.ledger.access import LedgerHandle

ResultT = TypeVar("ResultT")


@dataclass(frozen=True)
class RunSummary:
    """What a subscriber shows of a run (its text, workspace, models, whether it is done)."""

    task_id: str
    text: str
    workspace: str
    models: tuple[str, ...]
    done: bool


@dataclass
class Run(Generic[ResultT]):
    """A task running as an ``asyncio.Task`` in this process: the only wrapper of that task.
    It owns the id, the stop registration (:mod:`~mercury_nb.runs.stopping`) and the recorder
    (:meth:`~mercury_nb.runs.planning.PlannedRun.run`); it is held by this process's one
    registry (:mod:`~mercury_nb.runs.registry`), and front ends subscribe to it."""

    task_id: str
    task: asyncio.Task[ResultT]
    config: MercuryConfig
    text: str = ""
    handle: LedgerHandle | None = None
    """The ledger its recorder writes to (None: unrecorded)."""
    stopped: bool = False
    """A stop was asked for (by :meth:`stop` or from another thread or process)."""
    views: list[Any] = field(default_factory=list)
    """What shows it, subscribed by a front end (a cell's widget)."""

    @property
    def home(self) -> Path:
        """The ledger home its stop requests arrive through."""
        return Path(self.config.home).expanduser().resolve()

    @property
    def result(self) -> ResultT | None:
        """The task's result once it finished normally, else None."""
        if self.task.done() and not self.task.cancelled() and self.task.exception() is None:
            return self.task.result()
        return None

    def on_done(self, callback: Callable[[Run[ResultT]], object]) -> None:
        """Call ``callback(run)`` once the task is done (at once when it already is)."""
        self.task.add_done_callback(lambda _: callback(self))

    def summary(self) -> RunSummary:
        return RunSummary(self.task_id, self.text, str(Path(self.config.workdir).resolve()),
                          self.config.model_chain, self.task.done())

    async def outcome(self) -> ResultT:
        """The task's outcome (``aborted`` when it was stopped)."""
        return await self.task

    def done(self) -> bool:
        return self.task.done()

    def stop(self) -> None:
        """Cancel it here; the same ending as a stop from elsewhere (verdict ``aborted``)."""
        self.stopped = True
        self.task.cancel()

    def stop_threadsafe(self) -> None:
        """:meth:`stop` from any thread (the stop poller's): once, on the task's own loop."""
        if self.stopped:
            return
        self.stopped = True
        with contextlib.suppress(RuntimeError):  # the loop is closed: nothing runs any more
            self.task.get_loop().call_soon_threadsafe(self.task.cancel)


KEEP_FINISHED = 50
"""Finished runs kept (for ``await``, ``%mercury tasks`` and a late lookup by id)."""

_running: dict[str, Run[Any]] = {}
_finished: OrderedDict[str, Run[Any]] = OrderedDict()
_latest: list[Run[Any]] = []
_lock = threading.Lock()


def add(run: Run[Any]) -> None:
    """Hold ``run`` until its task is done, then among the recently finished."""
    with _lock:
        _running[run.task_id] = run
        _latest[:] = [run]
    run.on_done(_finished_now)


def _finished_now(run: Run[Any]) -> None:
    with _lock:
        if _running.get(run.task_id) is run:
            del _running[run.task_id]
        _finished[run.task_id] = run
        _finished.move_to_end(run.task_id)
        while len(_finished) > KEEP_FINISHED:
            _finished.popitem(last=False)


def running() -> tuple[Run[Any], ...]:
    """Runs whose task is not done, oldest first."""
    with _lock:
        return tuple(_running.values())


def get(task_id: str) -> Run[Any] | None:
    """A running or recently finished run by id."""
    with _lock:
        return _running.get(task_id) or _finished.get(task_id)


def latest() -> Run[Any] | None:
    """The run launched last in this process."""
    with _lock:
        return _latest[0] if _latest else None
