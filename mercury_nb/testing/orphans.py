"""Test helpers for process cleanup: a command leaving an orphaned setsid writer, bounded polls."""

from __future__ import annotations

import time
from pathlib import Path

ORPHAN_PID_FILE = "orphan.pid"


def orphan_writer(pid_file: str | Path = ORPHAN_PID_FILE, later: str = "late.txt") -> str:
    """A shell snippet that starts a ``setsid`` process outside the command's process group
    and tree (its parent subshell exits at once, so it is re-parented to init). It writes
    its pid to ``pid_file``, then, 30 s later, writes ``later`` (both relative to the
    command's folder unless absolute)."""
    inner = f"echo $$ > {pid_file}; sleep 30; echo late > {later}"
    return f"(setsid sh -c '{inner}' >/dev/null 2>&1 &)"


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting to be reaped counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def wait_until_gone(pid: int, deadline_s: float = 2.0) -> bool:
    """Poll until ``pid`` is gone; False if it still runs after ``deadline_s``."""
    end = time.monotonic() + deadline_s
    while alive(pid):
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def read_pid(path: Path, deadline_s: float = 30.0) -> int:
    """Poll until ``path`` holds a pid (written by :func:`orphan_writer`) and return it."""
    end = time.monotonic() + deadline_s
    while True:
        text = path.read_text() if path.exists() else ""
        if text.endswith("\n") and text.strip().isdigit():  # echo wrote it whole
            return int(text)
        if time.monotonic() > end:
            raise TimeoutError(f"no pid in {path} after {deadline_s}s")
        time.sleep(0.01)
