"""Tasks this process records that may never finish by themselves: when the process or kernel
ends first, their commands are killed and their ledger rows recorded ``aborted``.

:class:`~mercury_nb.runs.planning.PlannedRun` tracks its recorder here while it runs. The
normal way a task ends on a signal or a shutdown is Stop (its ``asyncio.Task`` cancelled, the
``aborted`` outcome built and recorded by the task itself); :func:`abort_unfinished` is what
remains when that cannot happen in time: its loop no longer runs, or the shutdown outlasted
its grace.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable

from mercury_nb.contract.banners import ABORTED
from mercury_nb.ledger.recorder import TaskRecorder
from mercury_nb.tools import processes

ENDED_WITH_PROCESS = ABORTED["interrupt"]
"""The banner of a task recorded aborted because its process ended before the task could."""

KILL_GRACE_S = 0.5
"""How long killing an unfinished task's commands may wait for them to disappear."""

_recorders: dict[str, TaskRecorder] = {}
_lock = threading.Lock()


def track(task_id: str, recorder: TaskRecorder) -> None:
    with _lock:
        _recorders[task_id] = recorder


def untrack(task_id: str, recorder: TaskRecorder) -> None:
    with _lock:
        if _recorders.get(task_id) is recorder:
            del _recorders[task_id]


def unfinished(task_ids: Iterable[str] | None = None) -> tuple[str, ...]:
    """Ids of tracked tasks not recorded as finished (all, or those of ``task_ids``)."""
    with _lock:
        wanted = set(_recorders) if task_ids is None else set(task_ids)
        return tuple(sorted(task_id for task_id, recorder in _recorders.items()
                            if task_id in wanted and not recorder.finished))


def task_text(task_id: str) -> str | None:
    """The task's text as its recorder keeps it (cleaned of secrets), if tracked."""
    with _lock:
        recorder = _recorders.get(task_id)
    return recorder.header.task if recorder is not None else None


def abort_unfinished(task_ids: Iterable[str] | None = None, *,
                     flush_timeout_s: float = 1.0) -> tuple[str, ...]:
    """Kill the commands of each unfinished task (all, or those of ``task_ids``), record it
    ``aborted`` and wait (at most ``flush_timeout_s`` per ledger) for the rows to be written.
    Never raises; returns the ids it recorded."""
    done: list[str] = []
    writers = []
    for task_id in unfinished(task_ids):
        with _lock:
            recorder = _recorders.get(task_id)
        if recorder is None:
            continue
        with contextlib.suppress(Exception):
            processes.kill_scope(task_id, grace_s=KILL_GRACE_S)
        with contextlib.suppress(Exception):
            if recorder.abort(ENDED_WITH_PROCESS):
                done.append(task_id)
                if recorder.writer not in writers:
                    writers.append(recorder.writer)
    for writer in writers:
        with contextlib.suppress(Exception):
            writer.flush(flush_timeout_s)
    return tuple(done)
