"""Directory-fd access below the workspace root: every component opened with O_NOFOLLOW.

A path is first resolved and checked (``confinement.Workspace.resolve``); its symlink-free
form is then walked from the root's fd one component at a time with ``O_NOFOLLOW``, so a
directory swapped for a symlink between the check and the use makes the call fail instead
of reaching outside the workspace. Files are then opened, created, renamed and unlinked
relative to the parent's fd (``dir_fd``), never by path.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
DIR_FLAGS = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
READ_FLAGS = os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC
"""``O_NONBLOCK``: opening a FIFO never waits for a writer (it is refused right after)."""


class PathChanged(OSError):
    """A component of the path became a symlink (or vanished) after the path was checked."""


class NotRegularFile(OSError):
    """The path names a FIFO, socket, device or folder, not a regular file."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def file_kind(mode: int) -> str:
    """A plain name for a file type: "FIFO (named pipe)", "socket", "device", "folder"."""
    if stat.S_ISFIFO(mode):
        return "FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    if stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISLNK(mode):
        return "symlink"
    return "special file"


@contextlib.contextmanager
def open_dir(root: Path, folder: Path, *, create: bool = False) -> Iterator[int]:
    """An fd of ``folder`` (inside ``root``, symlink-free) walked from ``root`` with
    ``O_NOFOLLOW``; missing folders are created on the way when ``create``. Raises
    :class:`PathChanged` when a component is a symlink or not a folder any more."""
    relative = folder.relative_to(root)
    fd = os.open(root, DIR_FLAGS & ~_NOFOLLOW)  # the root itself is trusted (resolved)
    try:
        for part in relative.parts:
            following = _step(fd, part, create)
            os.close(fd)
            fd = following
        yield fd
    finally:
        os.close(fd)  # the one fd held at any time (a failed step closed nothing)


def _step(fd: int, part: str, create: bool) -> int:
    """The fd of the folder ``part`` inside the folder ``fd`` (which stays open)."""
    try:
        try:
            return os.open(part, DIR_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, dir_fd=fd)
            return os.open(part, DIR_FLAGS, dir_fd=fd)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            raise PathChanged(error.errno, f"{part} is no longer a folder") from error
        raise


@contextlib.contextmanager
def open_regular(root: Path, path: Path) -> Iterator[int]:
    """A read-only fd of the regular file ``path`` (never blocks on a FIFO, never follows a
    final symlink). Raises :class:`NotRegularFile` for anything but a regular file."""
    with open_dir(root, path.parent) as parent:
        try:
            fd = os.open(path.name, READ_FLAGS, dir_fd=parent)
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise PathChanged(error.errno, f"{path.name} became a symlink") from error
            try:  # a socket cannot be opened at all (ENXIO): say what it is
                mode = os.stat(path.name, dir_fd=parent, follow_symlinks=False).st_mode
            except OSError:
                raise error from None
            if not stat.S_ISREG(mode):
                raise NotRegularFile(file_kind(mode)) from error
            raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(file_kind(mode))
        yield fd
    finally:
        os.close(fd)


def unlink_at(root: Path, path: Path) -> None:
    """Remove the file (or link) ``path`` through its parent's fd."""
    with open_dir(root, path.parent) as parent:
        os.unlink(path.name, dir_fd=parent)


def list_folder(root: Path, folder: Path) -> list[tuple[str, bool]]:
    """The entries of ``folder`` (inside ``root``, symlink-free) as ``(name, is_dir)``, sorted
    by name, listed from the folder's own fd (walked from ``root`` with ``O_NOFOLLOW``): a
    folder swapped for a symlink raises :class:`PathChanged` instead of listing the link's
    target. A symlink entry counts as a folder when it points to one; it is not entered."""
    with open_dir(root, folder) as fd, os.scandir(fd) as entries:
        found = [(entry.name, _is_dir(entry)) for entry in entries]
    return sorted(found)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False
