"""One file's recorded state (size, hash, small text) and its bounded reading from disk.

A state is read through the workspace's directory fds (:mod:`mercury_nb.workspace.dirfd`):
every folder on the way is opened with ``O_NOFOLLOW`` from the root, a symlink is recorded
by its target text (as git does) and never followed, a FIFO, socket or device is never
opened for reading, and the size of the opened fd decides how much is read *before* any
read: small files whole, larger ones hashed in chunks, and files over the hash budget not
read at all (compared by size and modification time only).
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.workspace.dirfd import READ_FLAGS, open_dir
from mercury_nb.workspace.reading import (
    BINARY_SNIFF_BYTES,
    FileTooLarge,
    digest_fd,
    looks_binary,
    read_upto,
)

DEFAULT_MAX_HASH_BYTES: int = MercuryConfig.model_fields["snapshot_max_hash_bytes"].default
"""Files larger than this are not read (the config's ``snapshot_max_hash_bytes`` default)."""
UNREAD_PREFIX = "unread:"
"""How the ``sha256`` of a file too large to read starts: ``unread:<size>:<mtime_ns>``."""


@dataclass(frozen=True)
class FileState:
    """One file as it was: size and hash always, the text when it is small text."""

    size: int
    sha256: str
    text: str | None = None
    binary: bool = False
    mtime_ns: int | None = None
    """When the file was last modified (None: unknown); lets a checkpoint tell cheaply
    which files may have changed since the snapshot."""

    @property
    def measurable(self) -> bool:
        """Whether line counts can be taken (text content is known)."""
        return self.text is not None


class TextBudget:
    """How much text content a snapshot may still hold."""

    def __init__(self, max_bytes: int) -> None:
        self.left = max_bytes

    def take(self, size: int) -> bool:
        if size > self.left:
            return False
        self.left -= size
        return True


def state_from_bytes(
    data: bytes, *, keep_text: bool, mtime_ns: int | None = None
) -> FileState:
    """A FileState for ``data``; text is kept only when asked and the data is not binary."""
    binary = looks_binary(data)
    text = data.decode("utf-8", errors="replace") if keep_text and not binary else None
    return FileState(
        size=len(data), sha256=hashlib.sha256(data).hexdigest(), text=text, binary=binary,
        mtime_ns=mtime_ns,
    )


def read_state(
    path: Path, *, root: Path, max_file_bytes: int,
    max_hash_bytes: int = DEFAULT_MAX_HASH_BYTES, budget: TextBudget | None = None,
) -> FileState | None:
    """The state of ``path`` (below ``root``) on disk now; None when it is absent, not a
    regular file or link, or cannot be read.

    A symlink is recorded by its target text. Files over ``max_file_bytes`` are hashed in
    chunks and keep no text; files over ``max_hash_bytes`` are not read at all.
    """
    try:
        with open_dir(root, path.parent) as parent:
            info = os.stat(path.name, dir_fd=parent, follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                target = os.readlink(path.name, dir_fd=parent)
                return state_from_bytes(os.fsencode(target), keep_text=True)
            if not stat.S_ISREG(info.st_mode):
                return None  # a FIFO, socket or device is never opened (it could block)
            fd = os.open(path.name, READ_FLAGS, dir_fd=parent)
        try:
            return _state_of(fd, max_file_bytes, max_hash_bytes, budget)
        finally:
            os.close(fd)
    except (OSError, ValueError):  # ValueError: a path not below ``root``
        return None  # absent, unreadable, or swapped meanwhile: not tracked rather than a crash


def _state_of(fd: int, max_file_bytes: int, max_hash_bytes: int,
              budget: TextBudget | None) -> FileState | None:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        return None  # swapped for a FIFO or device between the check and the open
    mtime = info.st_mtime_ns
    if info.st_size > max_hash_bytes:
        return _unread(info.st_size, mtime, read_upto(fd, BINARY_SNIFF_BYTES))
    if info.st_size <= max_file_bytes:
        data = read_upto(fd, max_file_bytes + 1)
        if len(data) <= max_file_bytes:
            keep = budget is None or budget.take(len(data))
            return state_from_bytes(data, keep_text=keep, mtime_ns=mtime)
        os.lseek(fd, 0, os.SEEK_SET)  # it grew while read: hash it like a large file
    try:
        digest = digest_fd(fd, max_hash_bytes)
    except FileTooLarge as error:
        os.lseek(fd, 0, os.SEEK_SET)
        return _unread(error.size, mtime, read_upto(fd, BINARY_SNIFF_BYTES))
    return FileState(size=digest.size, sha256=digest.sha256, binary=digest.binary,
                     mtime_ns=mtime)


def _unread(size: int, mtime_ns: int, head: bytes) -> FileState:
    """A file too large to read: known by size and modification time only."""
    return FileState(size=size, sha256=f"{UNREAD_PREFIX}{size}:{mtime_ns}",
                     binary=looks_binary(head), mtime_ns=mtime_ns)


def changed_on_disk(path: Path, state: FileState, *, root: Path, max_hash_bytes: int) -> bool:
    """Whether ``path`` may differ from ``state``: by size and mtime when both are known,
    else by hash. Unreadable or missing counts as changed."""
    try:
        with open_dir(root, path.parent) as parent:
            info = os.stat(path.name, dir_fd=parent, follow_symlinks=False)
    except (OSError, ValueError):
        return True
    if (state.mtime_ns, state.size) == (info.st_mtime_ns, info.st_size):
        return False
    now = read_state(path, root=root, max_file_bytes=max(state.size, 1),
                     max_hash_bytes=max_hash_bytes)
    return now is None or now.sha256 != state.sha256
