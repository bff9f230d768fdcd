"""The ledger's one writer thread per process: queued operations, flushed at exit, failures
reported once."""

from __future__ import annotations

import atexit
import contextlib
import queue
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from mercury_nb.ledger.store import Ledger
from mercury_nb.ledger.texts import LEDGER_FAILED

Operation = Callable[[Ledger], None]
FLUSH_TIMEOUT_S = 10.0


def _report_to_stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class LedgerWriter:
    """Runs ledger operations in order on one daemon thread; the first failure is reported
    (through ``report``) and later ones are dropped quietly."""

    def __init__(self, ledger: Ledger, report: Callable[[str], None] = _report_to_stderr) -> None:
        self.ledger = ledger
        self.report = report
        self.failed = False
        self._queue: queue.SimpleQueue[Operation | threading.Event | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()

    def submit(self, operation: Operation) -> None:
        self._ensure_thread()
        self._queue.put(operation)

    def flush(self, timeout: float = FLUSH_TIMEOUT_S) -> bool:
        """Wait until everything submitted so far is written; False on timeout."""
        if self._thread is None:
            return True
        done = threading.Event()
        self._queue.put(done)
        return done.wait(timeout)

    def close(self, timeout: float = FLUSH_TIMEOUT_S) -> None:
        """Flush, then stop the thread."""
        if self._thread is None:
            return
        self.flush(timeout)
        self._queue.put(None)
        self._thread.join(timeout)
        self._thread = None

    def _ensure_thread(self) -> None:
        with self._start_lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._work, name="mercury-ledger-writer", daemon=True
                )
                self._thread.start()

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            if isinstance(item, threading.Event):
                item.set()
                continue
            try:
                item(self.ledger)
            except Exception as error:
                self.fail(error)

    def fail(self, error: BaseException) -> None:
        """Report ``error`` if it is the first failure."""
        if self.failed:
            return
        self.failed = True
        with contextlib.suppress(Exception):  # a failing report must not fail the task
            self.report(LEDGER_FAILED.format(error=f"{type(error).__name__}: {error}"))


_writers: dict[Path, LedgerWriter] = {}


def flush_all(timeout: float = 5.0) -> None:
    """Wait (at most ``timeout`` per writer) until every writer of this process wrote what
    was submitted (interpreter exit, a kernel shutting down)."""
    for writer in list(_writers.values()):
        writer.flush(timeout=timeout)


atexit.register(flush_all)


def writer_for(ledger: Ledger) -> LedgerWriter:
    """The one writer of ``ledger`` in this process (flushed at interpreter exit)."""
    writer = _writers.get(ledger.path)
    if writer is None or writer.ledger is not ledger:
        writer = LedgerWriter(ledger)
        _writers[ledger.path] = writer
    return writer
