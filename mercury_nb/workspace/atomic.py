"""Atomic file writes: a temp file in the same folder, fsync, then one rename over the target."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

_DEFAULT_UMASK = 0o022


def atomic_write_bytes(path: Path | str, data: bytes, *, make_parents: bool = False) -> None:
    """Write ``data`` to ``path`` so readers see either the old file or the whole new one.

    The bytes go to a temp file beside ``path``, are flushed to disk, then renamed over the
    target with ``os.replace``. An existing file keeps its permission bits; a new file gets
    the usual ``0o666 & ~umask``. If anything fails or the write is interrupted, the target
    is untouched and the temp file is removed.
    """
    target = Path(path)
    if make_parents:
        target.parent.mkdir(parents=True, exist_ok=True)
    mode = _mode_for(target)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if hasattr(os, "fchmod"):
                os.fchmod(fd, mode)
            else:  # pragma: no cover - Windows
                os.chmod(tmp_name, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    _fsync_dir(target.parent)


def atomic_write_text(
    path: Path | str, text: str, *, encoding: str = "utf-8", make_parents: bool = False
) -> None:
    """Write ``text`` atomically, byte for byte (no newline translation)."""
    atomic_write_bytes(path, text.encode(encoding), make_parents=make_parents)


def _mode_for(target: Path) -> int:
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        return 0o666 & ~_current_umask()


def _current_umask() -> int:
    """The process umask, read without changing it (``os.umask`` would race other threads)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return _DEFAULT_UMASK


def _fsync_dir(folder: Path) -> None:
    """Make the rename itself durable where the platform allows it (best effort)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
