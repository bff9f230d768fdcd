"""SIGTERM, SIGHUP and SIGINT end a front end's running task like Stop; a second signal, or a
shutdown that outlasts its grace, ends the process at once (bounded).

While a :class:`StopOnSignals` is entered (the CLI enters one around a task), the first of
these signals cancels the attached :class:`~mercury_nb.runs.registry.Run` on its loop, exactly
as the Stop button does: verdict ``aborted``, files kept, the commands' process trees killed
by run_command's cancellation path, the ``aborted`` outcome recorded; the front end then
prints that outcome and exits. A watchdog thread bounds the wait: after ``grace_s`` seconds,
or at a second signal, it kills every tracked command (:func:`~mercury_nb.tools.processes.
kill_all`), records unfinished tasks ``aborted`` (:mod:`~mercury_nb.runs.unfinished`),
prints that outcome (JSON with ``as_json``, else its banner) and ends the process with
``exit_code``.

:mod:`~mercury_nb.tools.processes` installs its own SIGTERM/SIGHUP hooks (kill every command
tree, then die of the signal). Entering installs those first and lays these handlers over
them; leaving puts them back, so outside a task they hold as before.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType, TracebackType
from typing import Any

from mercury_nb.contract.outcome import TaskOutcome
from mercury_nb.runs import unfinished
from mercury_nb.runs.registry import Run
from mercury_nb.tools import processes

EXIT_SIGNALS: tuple[signal.Signals, ...] = tuple(
    sig for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None), signal.SIGINT)
    if sig is not None
)

STOPPING = ("mercury: {name} received; stopping task {task_id} as Stop does "
            "(aborted, files kept)…")
FORCED_AGAIN = "mercury: {name} again; exiting now."
FORCED_LATE = "mercury: the task did not end within {grace:g}s of {name}; exiting now."


CLEANUP_S = 2.0
"""Longest the last cleanup before a forced exit may take (kill commands, record aborted)."""


def end_commands_and_tasks(task_ids: list[str] | None) -> None:
    """Kill every tracked command and record unfinished tasks (``task_ids``, None: all)
    ``aborted``; never raises."""
    with contextlib.suppress(Exception):
        processes.kill_all(grace_s=unfinished.KILL_GRACE_S)
    with contextlib.suppress(Exception):
        unfinished.abort_unfinished(task_ids)


def run_for_at_most(work: Callable[[], None], timeout_s: float) -> None:
    """Run ``work`` on a daemon thread and wait at most ``timeout_s`` for it."""
    thread = threading.Thread(target=work, name="mercury-exit-cleanup", daemon=True)
    thread.start()
    thread.join(timeout_s)


def _to_stderr(text: str) -> None:
    with contextlib.suppress(Exception):
        print(text, file=sys.stderr, flush=True)


class StopOnSignals:
    """Ends the attached run like Stop on SIGTERM, SIGHUP or SIGINT (see the module)."""

    def __init__(self, grace_s: float, exit_code: int, *, as_json: bool = False,
                 report: Callable[[str], None] = _to_stderr,
                 exit_now: Callable[[int], None] = os._exit) -> None:
        self.grace_s = grace_s
        self.exit_code = exit_code
        self.as_json = as_json
        """A forced exit prints the ``aborted`` outcome as JSON (else its banner) on stdout."""
        self.report = report
        self.exit_now = exit_now
        self.received: signal.Signals | None = None
        """The first signal received, if any."""
        self._run: Run | None = None
        self._previous: dict[int, Any] = {}
        self._count = 0
        self._closed = False
        self._state = threading.Lock()
        self._forcing = False
        self._signalled = threading.Event()
        self._hurry = threading.Event()
        self._watchdog: threading.Thread | None = None

    def __enter__(self) -> StopOnSignals:
        if threading.current_thread() is not threading.main_thread():
            return self  # signal handlers can only be set from the main thread
        processes.install_exit_hooks()  # theirs first: ours lie over them while entered
        for sig in EXIT_SIGNALS:
            self._previous[sig] = signal.getsignal(sig)
            signal.signal(sig, self._handle)
        self._watchdog = threading.Thread(target=self._watch, name="mercury-signal-watchdog",
                                          daemon=True)
        self._watchdog.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._closed = True
        self._signalled.set()
        self._hurry.set()
        for sig, previous in self._previous.items():
            with contextlib.suppress(ValueError, TypeError):
                signal.signal(sig, previous if previous is not None else signal.SIG_DFL)
        self._previous.clear()

    def settle(self) -> None:
        """The front end has its outcome and prints it now: the watchdog stands down, and a
        later signal is ignored (the process is about to exit). If a forced exit already
        began, it prints and exits instead: this waits for it."""
        with self._state:
            forcing = self._forcing
            self._closed = True
        if forcing:
            threading.Event().wait(CLEANUP_S + 1.0)
        self._signalled.set()
        self._hurry.set()

    def attach(self, run: Run) -> None:
        """The run a signal stops (stopped at once if a signal came before it)."""
        self._run = run
        if self.received is not None:
            self._stop(run)

    def _stop(self, run: Run) -> None:
        with contextlib.suppress(RuntimeError):  # a closed loop: nothing runs any more
            run.task.get_loop().call_soon_threadsafe(run.stop)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        """Runs in the main thread between bytecodes: schedule, never block."""
        if self._closed:
            return
        self._count += 1
        if self._count > 1:
            self._hurry.set()  # the watchdog thread ends the process
            return
        self.received = signal.Signals(signum)
        run = self._run
        self.report(STOPPING.format(name=self.received.name,
                                    task_id=run.task_id if run is not None else "(starting)"))
        if run is not None:
            self._stop(run)
        self._signalled.set()

    def _watch(self) -> None:
        self._signalled.wait()
        if self._closed:
            return
        again = self._hurry.wait(self.grace_s)
        with self._state:
            if self._closed:
                return
            self._forcing = True
        name = self.received.name if self.received is not None else "a signal"
        self.report(FORCED_AGAIN.format(name=name) if again
                    else FORCED_LATE.format(grace=self.grace_s, name=name))
        self.force_exit()

    def force_exit(self) -> None:
        """Kill every tracked command, record the attached task ``aborted`` if it has not
        finished (at most :data:`CLEANUP_S`: a lock the stuck thread holds cannot keep the
        process alive), and end the process with ``exit_code``."""
        ids = [self._run.task_id] if self._run is not None else None

        def cleanup() -> None:
            end_commands_and_tasks(ids)
            with contextlib.suppress(Exception):
                print(self._last_words(), flush=True)

        run_for_at_most(cleanup, CLEANUP_S)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        self.exit_now(self.exit_code)

    def _last_words(self) -> str:
        """What a forced exit prints: the outcome it recorded (nothing measured any more)."""
        if not self.as_json or self._run is None:
            return unfinished.ENDED_WITH_PROCESS
        task_id = self._run.task_id
        outcome = TaskOutcome(task_id=task_id, task=unfinished.task_text(task_id) or "",
                              status="aborted", verdict="aborted", answer=None,
                              banner=unfinished.ENDED_WITH_PROCESS)
        return outcome.model_dump_json(indent=2)
