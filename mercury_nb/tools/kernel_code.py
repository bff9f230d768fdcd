"""Running the model's code in the user's namespace, in a worker thread the task can stop.

The task runs on the kernel's own loop, so the code must not: it runs in a daemon thread
(:class:`CodeRun`) while the loop stays free for the widget, Stop and the time limit. Its
``print`` output (``sys.stdout`` / ``sys.stderr`` route by thread while it runs) and its
displays (through :meth:`~mercury_nb.tools.kernel_access.KernelAccess.displays_of`) are
kept, bounded, instead of reaching the notebook. A stop (the task's Stop, the time limit)
raises :class:`CodeInterrupted` in that thread (``PyThreadState_SetAsyncExc``, again and
again for up to ``kernel_stop_grace_s``, so ``while True: pass`` ends at once and a bare
``except:`` cannot keep it); code inside native calls (a long ``time.sleep``, a C loop) gets
it only when it returns, and then the result says that the code is still running.
"""

from __future__ import annotations

import ast
import asyncio
import ctypes
import itertools
import linecache
import sys
import threading
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mercury_nb.contract.redaction import redact
from mercury_nb.contract.text_cut import CUT_REACH, cut_edges
from mercury_nb.tools.kernel_access import KernelAccess
from mercury_nb.transport.thread_streams import ThreadRouted

_numbers = itertools.count(1)
_live: dict[int, CodeRun] = {}
"""Runs whose thread has not ended, by number (one may run at a time in a process)."""
_stopped: set[str | None] = set()
"""Tasks whose Stop ended code they ran in the kernel (told once: :func:`stopped_code`)."""


class CodeInterrupted(BaseException):
    """Raised in the code's thread by a stop; a BaseException, so ``except Exception``
    in the user's code does not keep it running."""


class BoundedText:
    """Text written in pieces, showing its first and last ``keep`` characters and a count;
    ``CUT_REACH`` more characters are kept on the inner side of each cut, so a key
    across a cut is redacted whole before the cut is made."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.head = ""
        self.tail = ""
        self.total = 0

    def write(self, text: str) -> int:
        written = len(text)
        self.total += written
        room = self.keep + CUT_REACH - len(self.head)
        if room > 0:
            self.head += text[:room]
            text = text[room:]
        if text:
            self.tail = (self.tail + text)[-(self.keep + CUT_REACH):]
        return written

    def text(self, secrets: tuple[str, ...] = ()) -> str:
        """The text redacted, then cut (head and tail) when longer than twice ``keep``."""
        if self.total <= 2 * self.keep:
            return redact(self.head + self.tail, secrets)
        tail = self.tail
        if len(self.head) + len(tail) == self.total:  # nothing dropped: the tail's window
            tail = (self.head + tail)[-(self.keep + CUT_REACH):]  # may lie in the head
        head, tail = cut_edges(self.head, tail, self.keep, self.keep, secrets)
        cut = self.total - 2 * self.keep
        return f"{head}\n[… {cut:,} characters cut …]\n{tail}"


@dataclass
class CodeRun:
    """One run of ``code`` in ``kernel``'s namespace (see the module)."""

    code: str
    kernel: KernelAccess
    output_chars: int
    scope: str | None = None
    """The task it belongs to (what :func:`still_running` is asked about)."""
    number: int = field(default_factory=lambda: next(_numbers))
    stdout: BoundedText = field(init=False)
    stderr: BoundedText = field(init=False)
    displays: list[Mapping[str, Any]] = field(default_factory=list)
    value: Any = None
    has_value: bool = False
    error: BaseException | None = None
    traceback: str = ""
    started: float = 0.0
    ended: float | None = None
    _ident: int | None = None
    _settled: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.stdout = BoundedText(self.output_chars)
        self.stderr = BoundedText(self.output_chars)

    @property
    def filename(self) -> str:
        return f"<run_in_kernel #{self.number}>"

    @property
    def alive(self) -> bool:
        return self.number in _live

    def start(self) -> asyncio.Future[None]:
        """Start the thread; the future resolves (on the running loop) when it ended."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        _live[self.number] = self
        self.started = time.monotonic()

        def resolve() -> None:
            if not done.done():
                done.set_result(None)

        def work() -> None:
            try:
                self._work()
            finally:
                self.ended = time.monotonic()
                _live.pop(self.number, None)
                loop.call_soon_threadsafe(resolve)

        threading.Thread(target=work, name=f"mercury-{self.filename}", daemon=True).start()
        return done

    def interrupt(self) -> None:
        """Raise :class:`CodeInterrupted` in the code's thread (nothing once it finished)."""
        with self._lock:
            if self._settled or self._ident is None:
                return
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self._ident),
                                                       ctypes.py_object(CodeInterrupted))

    async def stop(self, done: asyncio.Future[None], grace_s: float) -> bool:
        """Interrupt until the thread ended (True) or ``grace_s`` passed (False)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace_s
        while not done.done():
            self.interrupt()
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            await asyncio.wait({done}, timeout=min(0.05, remaining))
        return True

    # --- in the code's thread ------------------------------------------------------------
    def _work(self) -> None:
        ident = threading.get_ident()
        with self._lock:
            self._ident = ident
        out, err = sys.stdout, sys.stderr
        routed_out, routed_err = (ThreadRouted(out, ident, self.stdout.write),
                                  ThreadRouted(err, ident, self.stderr.write))
        try:
            with self.kernel.displays_of(ident, self.displays.append):
                sys.stdout, sys.stderr = routed_out, routed_err
                try:
                    self._execute()
                finally:
                    self._settle()
                    if sys.stdout is routed_out:
                        sys.stdout = out
                    if sys.stderr is routed_err:
                        sys.stderr = err
        except BaseException as error:  # a stop landing at the very edge of the code
            if self.error is None:
                self.error = error

    def _settle(self) -> None:
        with self._lock:
            self._settled = True
            if self._ident is not None:  # a stop that came too late is dropped
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self._ident), None)

    def _execute(self) -> None:
        namespace = self.kernel.namespace()
        try:
            tree = ast.parse(self.code, self.filename, "exec")
            linecache.cache[self.filename] = (len(self.code), None,
                                              self.code.splitlines(True), self.filename)
            last = tree.body[-1] if tree.body else None
            if isinstance(last, ast.Expr):
                tree.body.pop()
            exec(compile(tree, self.filename, "exec"), namespace)
            if isinstance(last, ast.Expr):
                expression = ast.Expression(last.value)
                self.value = eval(compile(expression, self.filename, "eval"), namespace)
                self.has_value = True
        except BaseException as error:  # the code's own error, or a stop
            self.error = error
            self.traceback = self._format(error)

    def _format(self, error: BaseException) -> str:
        if isinstance(error, SyntaxError):
            return "".join(traceback.format_exception_only(error))
        tb = error.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != self.filename:
            tb = tb.tb_next  # from the code's own first frame on
        return "".join(traceback.format_exception(type(error), error, tb))


def mark_stopped(scope: str | None) -> None:
    """The task ``scope``'s Stop interrupted its code (its banner says so)."""
    _stopped.add(scope)


def stopped_code(scope: str | None) -> bool:
    """Whether the task ``scope``'s Stop interrupted its code (forgotten once asked)."""
    if scope in _stopped:
        _stopped.discard(scope)
        return True
    return False


def still_running(scope: str | None) -> bool:
    """Whether code run for the task ``scope`` could not be interrupted and runs on."""
    return any(run.scope == scope for run in list(_live.values()))


def running_elsewhere() -> CodeRun | None:
    """A run whose thread still runs (at most one runs at a time in a process)."""
    return next(iter(list(_live.values())), None)
