"""Bounded reads of workspace files: regular files only, no link followed, a budget first.

Every read of a workspace file's bytes goes through here. The file is opened with
:func:`mercury_nb.workspace.dirfd.open_regular` (each folder walked from the root with
``O_NOFOLLOW``, the file itself with ``O_NOFOLLOW | O_NONBLOCK``, then ``fstat`` of the opened
fd), so a FIFO, device, socket or folder is refused before a byte is read and a symlink is
never followed, not even one swapped in after a check. The size the opened fd reports is
held against the budget *before* reading, and at most budget + 1 bytes are ever read, so a
file that grows meanwhile (or lies about its size) is still refused instead of held.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from mercury_nb.workspace.dirfd import NotRegularFile, PathChanged, open_regular

BINARY_SNIFF_BYTES = 8000
"""A file whose first this many bytes hold a NUL is binary."""
CHUNK_BYTES = 1 << 20


class FileTooLarge(OSError):
    """The file holds more bytes than the read's budget; nothing beyond the budget was read."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(errno.EFBIG, f"{size:,} bytes, over the {limit:,}-byte read limit")
        self.size = size
        self.limit = limit


def looks_binary(head: bytes) -> bool:
    """Whether a file starting with ``head`` is binary (a NUL in its first bytes)."""
    return b"\0" in head[:BINARY_SNIFF_BYTES]


def read_upto(fd: int, limit: int) -> bytes:
    """At most ``limit`` bytes from ``fd``'s current position (fewer at the end)."""
    parts: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(left, CHUNK_BYTES))
        if not chunk:
            break
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


@contextlib.contextmanager
def open_file(root: Path, path: Path) -> Iterator[tuple[int, int]]:
    """``(fd, size)`` of the regular file ``path`` below ``root``, opened without following a
    link and without blocking; raises :class:`NotRegularFile` or :class:`PathChanged`."""
    with open_regular(root, path) as fd:
        yield fd, os.fstat(fd).st_size


def read_bounded(root: Path, path: Path, max_bytes: int) -> bytes:
    """The whole content of the regular file ``path`` below ``root``, or
    :class:`FileTooLarge` when it holds more than ``max_bytes`` (checked on the opened fd
    before reading; at most ``max_bytes + 1`` bytes are read)."""
    with open_file(root, path) as (fd, size):
        if size > max_bytes:
            raise FileTooLarge(size, max_bytes)
        data = read_upto(fd, max_bytes + 1)
    if len(data) > max_bytes:
        raise FileTooLarge(len(data), max_bytes)
    return data


def read_head(root: Path, path: Path, limit: int) -> tuple[bytes, int]:
    """The first ``limit`` bytes of the regular file ``path`` and the size its fd reports."""
    with open_file(root, path) as (fd, size):
        return read_upto(fd, limit), size


@dataclass(frozen=True)
class Digest:
    """A file's sha256 and size as read, and whether its head is binary."""

    sha256: str
    size: int
    binary: bool


def digest_fd(fd: int, max_bytes: int) -> Digest:
    """The sha256 of the file behind ``fd`` read in chunks (constant memory), or
    :class:`FileTooLarge` once more than ``max_bytes`` have been read."""
    digest = hashlib.sha256()
    size = 0
    binary: bool | None = None
    while chunk := os.read(fd, CHUNK_BYTES):
        if binary is None:
            binary = looks_binary(chunk)
        size += len(chunk)
        if size > max_bytes:
            raise FileTooLarge(size, max_bytes)
        digest.update(chunk)
    return Digest(digest.hexdigest(), size, bool(binary))


def refusal(error: OSError) -> str:
    """Why a read was refused, in plain words: "a FIFO (named pipe), not a regular file",
    "over the read limit", "a symlink (or changed while it was opened)"..."""
    if isinstance(error, NotRegularFile):
        return f"a {error.kind}, not a regular file"
    if isinstance(error, FileTooLarge):
        return str(error.strerror)
    if isinstance(error, PathChanged):
        return "a symlink, or a folder on the way became one (not followed)"
    if isinstance(error, FileNotFoundError | NotADirectoryError):
        return "missing"
    return str(error.strerror or error)
