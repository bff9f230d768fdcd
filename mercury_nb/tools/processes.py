"""Every process a run_command started, found to the last descendant and killed as a tree.

A command's shell leads its own session and process group, but a ``setsid`` or
double-forked child leaves both and is re-parented to init once the shell exits. So each
command is tracked three ways, through ``psutil``:

* the live tree under its shell;
* every descendant seen while the command ran (polled; pid and start time, so a reused pid
  is never taken for one of ours);
* a marker in the environment (``MERCURY_COMMAND_ID``) that every descendant inherits, found
  by scanning ``/proc`` — a ``setsid`` grandchild whose parent is long gone still carries it.

:func:`kill_tree` reads the process table once per scan (parents, start times, markers in
one pass) and finds the tree in it; it freezes everything found (SIGSTOP, so nothing forks
while it is being collected), scans again a bounded number of times for what forked before
being stopped, SIGKILLs it all and waits (bounded) over the known victims only — no table
scan per round — until each is gone, reporting truthfully what was killed and what survived.
Commands are registered under a *scope* (the task id): :func:`kill_scope` runs when a task
ends, :func:`kill_all` when the process exits (atexit, SIGTERM, SIGHUP; see
:func:`install_exit_hooks`). What escapes: a descendant that both leaves the tree before it
was seen and execs with an emptied environment. Under ``--sandbox workspace-write``
(:mod:`~mercury_nb.tools.command_launch`) bubblewrap is the command's first process: its
tree (a PID namespace of its own) is found and killed the same way.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import signal
import threading
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import psutil

from mercury_nb.tools import process_table
from mercury_nb.tools.process_table import MARKER_ENV as MARKER_ENV

KILL_GRACE_S = 1.5
"""How long :func:`kill_tree` waits for killed processes to disappear before it reports
them as survivors."""
_FREEZE_SCANS = 3
"""Table scans that look for the tree while freezing it (each finds what forked before its
parent was stopped; a tree still growing after the last is killed by the final scan)."""
_LATE_GRACE_S = 0.2
"""Wait for processes the final scan found (forked at the last moment)."""

_GONE = (psutil.NoSuchProcess, psutil.ZombieProcess)
_lock = threading.RLock()
_live: dict[str, CommandProcesses] = {}


@dataclass
class CommandProcesses:
    """One command's processes: its shell, its marker id, and the descendants seen so far."""

    command_id: str
    scope: str | None
    shell_pid: int | None = None
    seen: dict[int, float] = field(default_factory=dict)
    """pid -> start time of every descendant observed while the command ran."""

    def environment(self, base: dict[str, str]) -> dict[str, str]:
        """``base`` with this command's id added to the marker."""
        inherited = base.get(MARKER_ENV)
        marker = f"{inherited}:{self.command_id}" if inherited else self.command_id
        return {**base, MARKER_ENV: marker}

    def attach(self, shell_pid: int) -> None:
        """The command's shell was started as ``shell_pid``."""
        self.shell_pid = shell_pid
        with contextlib.suppress(*_GONE, psutil.AccessDenied):
            self.seen[shell_pid] = psutil.Process(shell_pid).create_time()

    def observe(self) -> None:
        """Record the shell's current descendants (called while the command runs)."""
        if self.shell_pid is None:
            return
        with contextlib.suppress(*_GONE, psutil.AccessDenied):
            for child in psutil.Process(self.shell_pid).children(recursive=True):
                with contextlib.suppress(*_GONE, psutil.AccessDenied):
                    self.seen.setdefault(child.pid, child.create_time())


@dataclass(frozen=True)
class KillReport:
    """What a kill found: ``killed`` pids are gone; ``survived`` ones still ran after it."""

    killed: tuple[int, ...] = ()
    survived: tuple[int, ...] = ()

    def describe(self) -> str:
        """One truthful line: how many processes were killed (pids), and any survivor."""
        if not self.killed and not self.survived:
            return "no process of it was left running"
        parts = []
        if self.killed:
            parts.append(f"killed {_count(len(self.killed))} (pids {_pids(self.killed)})")
        if self.survived:
            parts.append(
                f"{_count(len(self.survived))} could not be killed and may still run "
                f"(pids {_pids(self.survived)})"
            )
        return "; ".join(parts)


def _count(n: int) -> str:
    return f"{n} process" if n == 1 else f"{n} processes"


def _pids(pids: Iterable[int]) -> str:
    return ", ".join(str(p) for p in sorted(pids))


def register(scope: str | None) -> CommandProcesses:
    """A new command under ``scope`` (a task id; None: killed only at process exit)."""
    install_exit_hooks()
    command = CommandProcesses(command_id=uuid.uuid4().hex[:16], scope=scope)
    with _lock:
        _live[command.command_id] = command
    return command


def forget(command: CommandProcesses) -> None:
    """Stop tracking a command whose processes are all gone."""
    with _lock:
        _live.pop(command.command_id, None)


def end_now(command: CommandProcesses) -> None:
    """Kill ``command``'s tree at once and forget it: on a cancel or a failure, where a
    thread (which the cancel could abandon) might leave the tree running."""
    kill_tree(command)
    forget(command)


async def end_off_loop(command: CommandProcesses) -> None:
    """Kill what ``command`` left behind in a thread (the loop keeps running) and forget it."""
    await asyncio.to_thread(kill_tree, command)
    forget(command)


def live_commands(scope: str | None = None) -> list[CommandProcesses]:
    with _lock:
        return [c for c in _live.values() if scope is None or c.scope == scope]


def members(commands: Iterable[CommandProcesses]) -> dict[int, psutil.Process]:
    """Every live process of ``commands``: shells, seen descendants, marked processes and the
    trees under all of them, from one scan of the process table. Never this process."""
    commands = list(commands)
    if not commands:
        return {}
    seen = [(pid, started) for c in commands for pid, started in list(c.seen.items())]
    found = process_table.tree(process_table.scan(), marker_of(commands), seen)
    found.pop(os.getpid(), None)
    return found


def marker_of(commands: Iterable[CommandProcesses]) -> frozenset[str]:
    """The marker ids of ``commands`` (a process carrying any of them is theirs)."""
    return frozenset(c.command_id for c in commands)


def _signal(proc: psutil.Process, sig: int) -> None:
    with contextlib.suppress(*_GONE, psutil.AccessDenied, ProcessLookupError):
        proc.send_signal(sig)


def _freeze(commands: list[CommandProcesses]) -> dict[int, psutil.Process]:
    """SIGSTOP everything found; scan again (at most :data:`_FREEZE_SCANS` scans in all)
    while a scan still finds a process forked before its parent was stopped."""
    frozen: dict[int, psutil.Process] = {}
    for _ in range(_FREEZE_SCANS):
        fresh = {pid: p for pid, p in members(commands).items() if pid not in frozen}
        if not fresh:
            break
        for proc in fresh.values():
            _signal(proc, signal.SIGSTOP)
        frozen.update(fresh)
    return frozen


def kill_commands(
    commands: Iterable[CommandProcesses], grace_s: float = KILL_GRACE_S
) -> KillReport:
    """Freeze, collect and SIGKILL every process of ``commands``; wait until they are gone
    (at most ``grace_s``) and say what was killed and what survived. Also kills each
    command's process group. The commands stop being tracked when nothing survived.

    The tree is found by a bounded number of table scans (:func:`_freeze`, then one last
    scan for anything forked between a scan and its parent's stop), never one per round of
    the wait, so killing a tree is linear in its size and ends in bounded time; what did
    not die by then is reported as surviving, not waited for."""
    commands = list(commands)
    if not commands:
        return KillReport()
    deadline = time.monotonic() + grace_s
    victims = _freeze(commands)
    for command in commands:
        if command.shell_pid is not None and hasattr(os, "killpg"):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(command.shell_pid, signal.SIGKILL)
    for proc in victims.values():
        _signal(proc, signal.SIGKILL)
    left = process_table.wait_gone(victims, deadline)
    late = {pid: p for pid, p in members(commands).items() if pid not in victims}
    for proc in late.values():
        _signal(proc, signal.SIGKILL)
    victims.update(late)
    late_deadline = max(deadline, time.monotonic() + _LATE_GRACE_S)
    left.update(process_table.wait_gone(late, late_deadline))
    survived = tuple(sorted(left))
    killed = tuple(sorted(pid for pid in victims if pid not in left))
    if not survived:
        for command in commands:
            forget(command)
    return KillReport(killed, survived)


def kill_tree(command: CommandProcesses, grace_s: float = KILL_GRACE_S) -> KillReport:
    """Kill one command's whole tree (see :func:`kill_commands`)."""
    return kill_commands([command], grace_s)


def kill_scope(scope: str, grace_s: float = KILL_GRACE_S) -> KillReport:
    """Kill everything the commands of ``scope`` (a task) started and left running."""
    return kill_commands(live_commands(scope), grace_s)


def kill_all(grace_s: float = KILL_GRACE_S) -> KillReport:
    """Kill everything every tracked command started (process exit)."""
    return kill_commands(live_commands(), grace_s)


def leftovers(command: CommandProcesses) -> tuple[int, ...]:
    """Pids of the command's processes still running (its shell excluded)."""
    found = members([command])
    found.pop(command.shell_pid or -1, None)
    return tuple(sorted(found))


# --- process exit -------------------------------------------------------------------------

_hooks_installed = False
_signal_hooks_installed = False


def _kill_all_quietly() -> None:
    with contextlib.suppress(Exception):
        kill_all()


def _on_exit_signal(signum: int, frame: FrameType | None, previous: Any) -> None:
    _kill_all_quietly()
    if callable(previous):
        previous(signum, frame)
        return
    if previous == signal.SIG_IGN:
        return
    signal.signal(signum, signal.SIG_DFL)  # die of the signal, as if we had never caught it
    os.kill(os.getpid(), signum)


def install_exit_hooks() -> None:
    """Kill every tracked command's processes at interpreter exit (atexit) and on SIGTERM or
    SIGHUP (then the previous handler runs, or the default: the process dies of the
    signal). Idempotent; the signal handlers are installed from the main thread only."""
    global _hooks_installed, _signal_hooks_installed
    with _lock:
        if not _hooks_installed:
            atexit.register(_kill_all_quietly)
            _hooks_installed = True
        if _signal_hooks_installed or threading.current_thread() is not threading.main_thread():
            return
        for signum in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
            if signum is None:
                continue
            previous = signal.getsignal(signum)

            def handler(s: int, f: FrameType | None, previous: Any = previous) -> None:
                _on_exit_signal(s, f, previous)

            signal.signal(signum, handler)
        _signal_hooks_installed = True
