"""Every process a run_command started, found to the last descendant and killed as a tree.

A command's shell leads its own session and process group, but a ``setsid`` or
double-forked child leaves both and is re-parented to init once the shell exits. So each
command is tracked three ways, through ``psutil``:

* the live tree under its shell;
* every descendant seen while the command ran (polled; pid and start time, so a reused pid
  is never taken for one of ours);
* a marker in the environment (``MERCURY_COMMAND_ID``) that every descendant inherits, found
  by scanning ``/proc`` — a ``setsid`` grandchild whose parent is long gone still carries it.

:func:`kill_tree` freezes everything found (SIGSTOP, so nothing forks while it is being
collected), collects again until nothing new appears, SIGKILLs it all and waits (bounded)
until each process is gone, reporting truthfully what was killed and what survived.
Commands are registered under a *scope* (the task id): :func:`kill_scope` runs when a task
ends, :func:`kill_all` when the process exits (atexit, SIGTERM, SIGHUP; see
:func:`install_exit_hooks`). What escapes: a descendant that both leaves the tree before it
was seen and execs with an emptied environment. Commands are not sandboxed.
"""

from __future__ import annotations

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

MARKER_ENV = "MERCURY_COMMAND_ID"
"""Environment variable carrying the ids of the commands a process descends from
(``:``-separated, so a command run by a command is found under both)."""

KILL_GRACE_S = 1.5
"""How long :func:`kill_tree` waits for killed processes to disappear before it reports
them as survivors."""
_POLL_S = 0.02
_FREEZE_ROUNDS = 20

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


def live_commands(scope: str | None = None) -> list[CommandProcesses]:
    with _lock:
        return [c for c in _live.values() if scope is None or c.scope == scope]


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except _GONE:
        return False
    except psutil.AccessDenied:
        return True


def _has_marker(proc: psutil.Process, ids: frozenset[str]) -> bool:
    try:
        value = proc.environ().get(MARKER_ENV)
    except (*_GONE, psutil.AccessDenied, OSError):
        return False
    return bool(value) and not ids.isdisjoint(value.split(":"))


def members(commands: Iterable[CommandProcesses]) -> dict[int, psutil.Process]:
    """Every live process of ``commands``: shells, seen descendants, marked processes and the
    trees under all of them. Never this process."""
    commands = list(commands)
    if not commands:
        return {}
    ids = frozenset(c.command_id for c in commands)
    roots: list[psutil.Process] = []
    for command in commands:
        for pid, started in list(command.seen.items()):
            with contextlib.suppress(*_GONE, psutil.AccessDenied):
                proc = psutil.Process(pid)
                if abs(proc.create_time() - started) > 0.01:
                    continue  # the pid was reused by a stranger
                roots.append(proc)
    roots.extend(p for p in psutil.process_iter() if _has_marker(p, ids))
    found: dict[int, psutil.Process] = {}
    for root in roots:
        with contextlib.suppress(*_GONE, psutil.AccessDenied):
            for proc in (root, *root.children(recursive=True)):
                found.setdefault(proc.pid, proc)
    found.pop(os.getpid(), None)
    return {pid: proc for pid, proc in found.items() if _alive(proc)}


def _signal(proc: psutil.Process, sig: int) -> None:
    with contextlib.suppress(*_GONE, psutil.AccessDenied, ProcessLookupError):
        proc.send_signal(sig)


def _freeze(commands: list[CommandProcesses]) -> dict[int, psutil.Process]:
    """SIGSTOP everything found, again and again until no new process appears."""
    frozen: dict[int, psutil.Process] = {}
    for _ in range(_FREEZE_ROUNDS):
        found = members(commands)
        fresh = {pid: p for pid, p in found.items() if pid not in frozen}
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
    command's process group. The commands stop being tracked when nothing survived."""
    commands = list(commands)
    if not commands:
        return KillReport()
    victims = _freeze(commands)
    for command in commands:
        if command.shell_pid is not None and hasattr(os, "killpg"):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(command.shell_pid, signal.SIGKILL)
    for proc in victims.values():
        _signal(proc, signal.SIGKILL)
    deadline = time.monotonic() + grace_s
    while True:
        late = members(commands)  # anything forked between the last freeze and the kill
        for pid, proc in late.items():
            if pid not in victims:
                victims[pid] = proc
            _signal(proc, signal.SIGKILL)
        if not late or time.monotonic() > deadline:
            break
        time.sleep(_POLL_S)
    survived = tuple(sorted(late))
    killed = tuple(sorted(pid for pid in victims if pid not in late))
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
