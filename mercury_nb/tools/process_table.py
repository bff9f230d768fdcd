"""The process table read in one pass, the trees found in it, and a bounded wait for victims.

A scan reads every process once (parent, start time, status, and the command marker from
its environment); finding a tree in it is linear in the table. ``psutil``'s own
``children(recursive=True)`` reads the whole table on every call, so calling it per process
of an 800-process tree read the table 800 times, again in every round of the old wait.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

import psutil

MARKER_ENV = "MERCURY_COMMAND_ID"
"""Environment variable carrying the ids of the commands a process descends from
(``:``-separated, so a command run by a command is found under both)."""

POLL_S = 0.02
"""Pause between two looks at the victims still alive."""

_GONE = (psutil.NoSuchProcess, psutil.ZombieProcess)
_ATTRS = ["ppid", "create_time", "status", "environ"]


@dataclass(frozen=True)
class Entry:
    """One live process of a scan: its parent, start time and command marker."""

    proc: psutil.Process
    ppid: int
    started: float
    marker: str


def scan() -> dict[int, Entry]:
    """The process table, read once; zombies (already dead) are left out."""
    table: dict[int, Entry] = {}
    for proc in psutil.process_iter(_ATTRS, ad_value=None):
        info = proc.info
        if info.get("status") == psutil.STATUS_ZOMBIE or info.get("ppid") is None:
            continue
        environ = info.get("environ") or {}
        table[proc.pid] = Entry(proc, int(info["ppid"]), float(info.get("create_time") or 0.0),
                                str(environ.get(MARKER_ENV) or ""))
    return table


def tree(table: dict[int, Entry], ids: frozenset[str],
         seen: Iterable[tuple[int, float]]) -> dict[int, psutil.Process]:
    """The processes of ``table`` that carry one of the marker ``ids``, or were ``seen``
    (pid and start time match, so a reused pid is never taken), and every descendant of
    them: one pass over the table, one walk down the tree."""
    roots = [pid for pid, entry in table.items()
             if entry.marker and not ids.isdisjoint(entry.marker.split(":"))]
    for pid, started in seen:
        entry = table.get(pid)
        if entry is not None and abs(entry.started - started) <= 0.01:
            roots.append(pid)
    children: dict[int, list[int]] = {}
    for pid, entry in table.items():
        children.setdefault(entry.ppid, []).append(pid)
    found: set[int] = set()
    while roots:
        pid = roots.pop()
        if pid not in found:
            found.add(pid)
            roots.extend(children.get(pid, ()))
    return {pid: table[pid].proc for pid in found}


def alive(proc: psutil.Process) -> bool:
    """Whether ``proc`` still runs (a zombie is dead; one we may not look at is alive)."""
    try:
        return bool(proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE)
    except _GONE:
        return False
    except psutil.AccessDenied:
        return True


def wait_gone(victims: dict[int, psutil.Process], deadline: float) -> dict[int, psutil.Process]:
    """The victims still alive at ``deadline`` (``time.monotonic()``), or none as soon as
    none is: each round looks only at the victims left, never at the process table."""
    left = dict(victims)
    while True:
        left = {pid: proc for pid, proc in left.items() if alive(proc)}
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(POLL_S)
