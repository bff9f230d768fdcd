"""Atomic file writes: a temp file in the same folder, fsync, then one rename over the target."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from mercury_nb.workspace.dirfd import _CLOEXEC, _NOFOLLOW, open_dir

_DEFAULT_UMASK = 0o022
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC


def temp_name(target: str) -> str:
    """A fresh hidden temp name for writing ``target``: ``.<random>.tmp`` (13 bytes), never
    longer than the target's own name when that is longer, so a name of up to 255 bytes
    can still be written."""
    return f".{secrets.token_hex(4)}.tmp"


def atomic_write_bytes(
    path: Path | str, data: bytes, *, make_parents: bool = False, root: Path | None = None
) -> None:
    """Write ``data`` to ``path`` so readers see either the old file or the whole new one.

    The bytes go to a temp file beside ``path``, are flushed to disk, then renamed over the
    target with ``os.replace``, both relative to the folder's fd. With ``root`` (the
    workspace), that folder is reached from ``root`` one component at a time with
    ``O_NOFOLLOW`` (see :mod:`mercury_nb.workspace.dirfd`), so a folder swapped for a symlink
    meanwhile is refused instead of written through. An existing file keeps its permission
    bits; a new file gets the usual ``0o666 & ~umask``. If anything fails or the write is
    interrupted, the target is untouched and the temp file is removed.
    """
    target = Path(path)
    base = root if root is not None else target.parent
    if make_parents and root is None:
        target.parent.mkdir(parents=True, exist_ok=True)
    with open_dir(base, target.parent, create=make_parents) as folder:
        _write_in(folder, target.name, data)


def _write_in(folder: int, name: str, data: bytes) -> None:
    mode = _mode_for(folder, name)
    tmp = temp_name(name)
    fd = os.open(tmp, _TEMP_FLAGS, 0o600, dir_fd=folder)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=folder)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable (best effort)
        os.fsync(folder)


def atomic_write_text(
    path: Path | str, text: str, *, encoding: str = "utf-8", make_parents: bool = False,
    root: Path | None = None,
) -> None:
    """Write ``text`` atomically, byte for byte (no newline translation)."""
    atomic_write_bytes(path, text.encode(encoding), make_parents=make_parents, root=root)


def _mode_for(folder: int, name: str) -> int:
    try:
        return stat.S_IMODE(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
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
