"""Which process owns a running task, and whether that process is still alive.

A task row records the owner's pid and a start token (the boot id and the process start
time on Linux), so a pid reused by an unrelated process after a crash is not mistaken for
the owner. Without ``/proc`` the token is empty and liveness falls back to the pid alone.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

_PROC = Path("/proc")


@dataclass(frozen=True)
class Owner:
    """A process: its pid and start token ("" where the platform gives none)."""

    pid: int
    token: str


def _boot_id() -> str:
    try:
        return (_PROC / "sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def start_token(pid: int) -> str | None:
    """The start token of process ``pid``; ``""`` when the platform has no ``/proc``;
    ``None`` when ``/proc`` exists but the process does not run (gone, or a zombie)."""
    if not _PROC.is_dir():
        return ""
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: split after the last ")"
    fields = stat[stat.rfind(")") + 2 :].split()
    if not fields or fields[0] in ("Z", "X"):
        return None  # a zombie has stopped running; only its exit status is left
    start_ticks = fields[19] if len(fields) > 19 else ""
    return f"{_boot_id()}:{start_ticks}"


@cache
def current_owner() -> Owner:
    """This process."""
    pid = os.getpid()
    return Owner(pid=pid, token=start_token(pid) or "")


def _pid_exists(pid: int) -> bool:
    if pid <= 0:
        return False
    if sys.platform == "win32":
        return _windows_pid_exists(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, owned by someone else
    except OSError:
        return False
    return True


def _windows_pid_exists(pid: int) -> bool:  # pragma: no cover - exercised on Windows only
    import ctypes

    kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined,unused-ignore]
    handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
    if not handle:
        return False
    try:
        code = ctypes.c_ulong()
        if not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)):
            return False
        return code.value == 259  # STILL_ACTIVE
    finally:
        kernel32.CloseHandle(handle)


def is_alive(pid: int | None, token: str | None) -> bool:
    """Whether the process that recorded (``pid``, ``token``) still runs."""
    if pid is None:
        return False
    now = start_token(pid)
    if now is None:
        return False
    if now and token:
        return now == token
    return _pid_exists(pid)
