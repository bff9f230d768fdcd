"""A kernel that shuts down with running tasks ends them like Stop: ``aborted`` in the ledger,
their commands killed.

Three hooks, installed when the extension loads (:func:`install`, idempotent):

* **The shutdown request** (a shutdown or restart of the kernel, ``KernelManager.
  shutdown_kernel``). The kernel's ``do_shutdown`` is wrapped: before it runs, every running
  task is cancelled on its loop, as Stop does, and awaited for at most
  ``kernel_shutdown_grace_s`` (the request comes on ipykernel's control thread while tasks
  run on the shell's loop, which still runs then); the ``aborted`` outcome is built and
  recorded by the task itself.
* **SIGTERM and SIGHUP** (a shutdown request that went unanswered, a dying session): the
  loop can no longer be waited for, so unfinished tasks are recorded ``aborted`` at once and
  their commands killed (:mod:`~mercury_nb.runs.unfinished`), then
  :mod:`~mercury_nb.tools.processes`' own hooks run (every command tree killed, the kernel
  dies of the signal).
* **Interpreter exit** (``atexit``: ``exit`` in a cell, the loop closed with tasks pending):
  the same direct record, for whatever is still unfinished.

Whatever a hook leaves unfinished after its bound is recorded ``aborted`` directly as well,
and the ledger's writes are flushed before the kernel goes. Installing imports nothing heavy
(loading the extension stays light); a hook in a kernel where no task ran does nothing.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import inspect
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

HOOKED = "_mercury_shutdown_hook"
"""Attribute marking a kernel's ``do_shutdown`` as wrapped already."""

FLUSH_S = 2.0
"""Longest a shutdown waits for the ledger's queued writes."""

_installed = False


def install(shell: Any) -> None:
    """Hook ``shell``'s kernel shutdown, SIGTERM / SIGHUP and the interpreter's exit."""
    global _installed
    kernel: Any = getattr(shell, "kernel", None)
    original = getattr(kernel, "do_shutdown", None)
    if original is not None and not getattr(original, HOOKED, False):
        kernel.do_shutdown = _wrapped(original)
    if _installed:
        return
    _installed = True
    atexit.register(end_unfinished)
    if threading.current_thread() is threading.main_thread():
        _install_signal_hooks()


def _wrapped(original: Callable[[bool], Any]) -> Callable[[bool], Any]:
    async def do_shutdown(restart: bool) -> Any:
        with contextlib.suppress(Exception):
            await stop_running(_grace_s())
        result = original(restart)
        return await result if inspect.isawaitable(result) else result

    setattr(do_shutdown, HOOKED, True)
    return do_shutdown


def _grace_s() -> float:
    from mercury_nb.contract.config import MercuryConfig
    from mercury_nb.runs.settings import plan

    try:
        return plan(check_workdir=False).kernel_shutdown_grace_s
    except ValueError:  # a bad setting elsewhere: the field's default
        return float(MercuryConfig.model_fields["kernel_shutdown_grace_s"].default)


async def _cancel_and_wait(tasks: list[asyncio.Task[Any]], grace_s: float) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.wait(tasks, timeout=grace_s)


async def stop_running(grace_s: float) -> None:
    """Cancel every running task as Stop does and wait at most ``grace_s`` for their
    ``aborted`` outcomes (on their own loop, from this one or another thread's); what is left
    is recorded ``aborted`` directly. Then the ledger's writes are flushed."""
    if "mercury_nb.runs.registry" not in sys.modules:
        return  # no task ran in this kernel
    from mercury_nb.runs import registry

    records = registry.running()
    by_loop: dict[asyncio.AbstractEventLoop, list[asyncio.Task[Any]]] = {}
    for record in records:
        if not record.task.done():
            by_loop.setdefault(record.task.get_loop(), []).append(record.task)
    here = asyncio.get_running_loop()
    for loop, tasks in by_loop.items():
        if loop is here:
            await _cancel_and_wait(tasks, grace_s)
        elif loop.is_running():
            future = asyncio.run_coroutine_threadsafe(_cancel_and_wait(tasks, grace_s), loop)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.wrap_future(future), grace_s + 1.0)
    await asyncio.to_thread(end_unfinished, [r.task_id for r in records])


def end_unfinished(task_ids: list[str] | None = None) -> None:
    """Record unfinished tasks (``task_ids``; None: all) ``aborted``, kill their commands and
    flush the ledger's writes; never raises."""
    if "mercury_nb.runs.unfinished" not in sys.modules:
        return  # no task was ever recorded in this process
    from mercury_nb.ledger.writer import flush_all
    from mercury_nb.runs import unfinished

    with contextlib.suppress(Exception):
        unfinished.abort_unfinished(task_ids)
    with contextlib.suppress(Exception):
        flush_all(FLUSH_S)


def _install_signal_hooks() -> None:
    from mercury_nb.tools import processes

    processes.install_exit_hooks()  # theirs run after ours: kill every tree, then die
    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is None:
            continue
        previous = signal.getsignal(sig)

        def handler(signum: int, frame: FrameType | None, previous: Any = previous) -> None:
            # on a helper thread, bounded: a lock the interrupted code holds cannot hang it
            worker = threading.Thread(target=end_unfinished, daemon=True,
                                      name="mercury-kernel-exit")
            worker.start()
            worker.join(FLUSH_S + 1.0)
            if callable(previous):
                previous(signum, frame)
            elif previous != signal.SIG_IGN:
                signal.signal(signum, signal.SIG_DFL)
                signal.raise_signal(signum)

        signal.signal(sig, handler)
