"""Stop from anywhere: a stop request stored in the ledger, honoured by the owning process.

:func:`request_stop` (any process) marks a running task in the ledger. Every process that
runs tasks has one :class:`StopPoller` per ledger: a daemon thread that asks SQLite's
``PRAGMA data_version`` every :data:`POLL_S` seconds and, only when something was
committed, looks up stop requests for the tasks this process runs; it cancels a requested
task on its own asyncio loop (``call_soon_threadsafe``), exactly as the Stop button does:
verdict ``aborted``, nothing rolled back, the change summary of what was written, and the
running command's process tree killed by run_command's cancellation path. Streamed chunks
never touch SQLite.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from mercury_nb.contract.home import home_of
from mercury_nb.ledger.access import LedgerHandle, open_ledger
from mercury_nb.ledger.reader import LedgerReader, safe_close
from mercury_nb.runs import registry as runs_here
from mercury_nb.runs.lookup import Refusal, find_task

POLL_S = 0.15
"""How often a process with running tasks checks for stop requests (a cheap pragma)."""

IDLE_POLLS = 20
"""Polls with no local task before a poller ends (it is started again on demand)."""

StopKind = Literal["requested", "not-running", "unknown"]

NOT_RUNNING = "Task {task_id} is not running (it is {status}); there is nothing to stop."
REQUESTED = "Stop requested for task {task_id}; it ends as aborted within a second."


@dataclass(frozen=True)
class StopReply:
    """What :func:`request_stop` did: ``requested``, ``not-running`` or ``unknown``."""

    kind: StopKind
    task_id: str
    message: str


def request_stop(task_id_or_prefix: str, *, home: Path | str | None = None,
                 handle: LedgerHandle | None = None) -> StopReply:
    """Ask whichever process runs the task (an id or a unique prefix) to stop it.

    Tasks left ``running`` by a dead process are first paused (crash recovery), so they
    answer ``not-running``. ``handle`` is a ledger a front end already opened with its
    startup pass (which did that recovery); else the one at ``home`` (default
    ``MERCURY_HOME``, else ``~/.mercury``) is opened and recovered here."""
    if handle is None:
        handle = open_ledger(home if home is not None else home_of())
        handle.flush()
        handle.ledger.recover_interrupted()
    ledger = handle.ledger
    record = find_task(ledger, task_id_or_prefix)
    if isinstance(record, Refusal):
        return StopReply("unknown", task_id_or_prefix, record.message)
    if record.status != "running" or not ledger.request_stop(record.id):
        status = record.status if record.status != "running" else "finishing"
        return StopReply("not-running", record.id,
                         NOT_RUNNING.format(task_id=record.id, status=status))
    local = runs_here.get(record.id)
    if local is not None and not local.done():  # running here: no need to wait for the poller
        local.stop_threadsafe()
    return StopReply("requested", record.id, REQUESTED.format(task_id=record.id))


_pollers: dict[Path, StopPoller] = {}
_lock = threading.Lock()


def watch_for_stops(home: Path) -> None:
    """Make sure a poller watches ``home``'s ledger for stop requests of this process's runs
    (the runs it watches are the registry's recorded ones: :func:`local_ids`)."""
    with _lock:
        poller = _pollers.get(home)
        if poller is None or not poller.is_alive():
            poller = StopPoller(home)
            _pollers[home] = poller
            poller.start()


def local_ids(home: Path) -> list[str]:
    """This process's recorded runs in ``home``'s ledger that are running and not stopped."""
    return [run.task_id for run in runs_here.running()
            if run.handle is not None and run.home == home and not run.stopped]


class StopPoller(threading.Thread):
    """Per process and ledger: cancels local tasks whose stop was requested (see module).

    ``reader`` is an open reader of ``home``'s ledger to poll through, the caller's to close
    (:meth:`poll_once` without the thread); else the thread opens and closes its own."""

    def __init__(self, home: Path, interval_s: float = POLL_S, *,
                 reader: LedgerReader | None = None) -> None:
        super().__init__(name="mercury-stop-poller", daemon=True)
        self.home = home
        self.interval_s = interval_s
        self._reader = reader
        self._own_reader = reader is None
        self._idle = 0

    def run(self) -> None:
        try:
            if self._own_reader:
                self._reader = LedgerReader(self.home)
            while True:
                self.poll_once()
                with _lock:  # decided under the lock: a run watched now is not missed
                    idle = self._idle >= IDLE_POLLS and not local_ids(self.home)
                    if idle and _pollers.get(self.home) is self:
                        del _pollers[self.home]
                        return
                threading.Event().wait(self.interval_s)
        except sqlite3.Error:
            with _lock:  # an unusable ledger: the Stop button still works locally
                if _pollers.get(self.home) is self:
                    del _pollers[self.home]
        finally:
            if self._own_reader:
                safe_close(self._reader)

    def poll_once(self) -> None:
        """One check: the pragma, then (only after a commit) the stop requests."""
        changed = self._reader is not None and self._reader.changed()
        ids = local_ids(self.home)  # after the pragma: a later request changes it again
        self._idle = 0 if ids else self._idle + 1
        if not changed or not ids or self._reader is None:
            return
        for task_id in self._reader.stop_requested(ids):
            run = runs_here.get(task_id)
            if run is not None:
                run.stop_threadsafe()
