"""Applying an undo plan to disk: per file, a compare-and-swap right before one atomic write.

Each file is re-read just before it is written: when its content is no longer what the plan
saw, it is left as is and named. What a file held before the undo wrote it is kept in the
content store, so the undo can itself be undone (:class:`Applied` carries those states).
A notebook goes back through :func:`write_notebook_back`, the one place that writes one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import assert_never

from mercury_nb.contract.undo_plan import (
    LEFT_CHANGED,
    DeleteCreated,
    Left,
    RecreateDeleted,
    Restore,
    UndoPlan,
)
from mercury_nb.workspace.atomic import atomic_write_bytes
from mercury_nb.workspace.dirfd import open_regular, unlink_at
from mercury_nb.workspace.file_state import DEFAULT_MAX_HASH_BYTES
from mercury_nb.workspace.reading import read_upto
from mercury_nb.workspace.undo_store import KeptFile, current_hash, get_blob, put_blob

NOT_IN_STORE = "left as is: {path}: its earlier content is no longer in the store"


@dataclass
class Applied:
    """What an undo did: the files restored, those left (path, why), and each written file's
    states for the undo's own record (before the undo -> after it)."""

    restored: list[str] = field(default_factory=list)
    left: list[tuple[str, str]] = field(default_factory=list)
    states: dict[str, KeptFile] = field(default_factory=dict)


def write_notebook_back(root: Path, path: str, data: bytes) -> None:
    """Write a notebook's content back. Today through disk (an atomic replace); the seam
    where an open notebook's live path will take over."""
    atomic_write_bytes(root / path, data, make_parents=True, root=root)


def _write_back(root: Path, path: str, data: bytes) -> None:
    if path.endswith(".ipynb"):
        write_notebook_back(root, path, data)
    else:
        atomic_write_bytes(root / path, data, make_parents=True, root=root)


def _read_now(root: Path, path: str, limit: int) -> bytes | None:
    """The file's bytes now (None: absent or not a regular file; over ``limit``: None)."""
    try:
        with open_regular(root, root / path) as fd:
            data = read_upto(fd, limit + 1)
    except (OSError, ValueError):
        return None
    return data if len(data) <= limit else None


def apply_plan(plan: UndoPlan, root: Path, home: Path | str, *,
               max_hash_bytes: int = DEFAULT_MAX_HASH_BYTES) -> Applied:
    """Carry out ``plan`` below ``root``, file by file, each under compare-and-swap."""
    done = Applied()
    for action in plan.actions:
        match action:
            case Left(path=path, why=why):
                done.left.append((path, why))
            case Restore(path=path, before=before, expect=expect):
                _swap(done, root, home, path, expect, before, max_hash_bytes)
            case RecreateDeleted(path=path, before=before):
                _swap(done, root, home, path, None, before, max_hash_bytes)
            case DeleteCreated(path=path, expect=expect):
                _swap(done, root, home, path, expect, None, max_hash_bytes)
            case _ as unreachable:
                assert_never(unreachable)
    return done


def _swap(done: Applied, root: Path, home: Path | str, path: str, expect: str | None,
          target: str | None, max_hash_bytes: int) -> None:
    """Turn ``path`` from hash ``expect`` into the kept ``target`` (None: delete it)."""
    data = None
    if target is not None:
        data = get_blob(home, target)
        if data is None:
            done.left.append((path, NOT_IN_STORE.format(path=path)))
            return
    if current_hash(root, path, max_hash_bytes) != expect:  # the compare, right before
        done.left.append((path, LEFT_CHANGED.format(path=path)))
        return
    if expect is not None:  # keep what is overwritten, so this undo can be undone
        now = _read_now(root, path, max_hash_bytes)
        if now is None or hashlib.sha256(now).hexdigest() != expect:
            done.left.append((path, LEFT_CHANGED.format(path=path)))
            return
        put_blob(home, now)
    try:
        if data is None:
            unlink_at(root, root / path)
        else:
            _write_back(root, path, data)
    except OSError as error:
        done.left.append((path, f"left as is: {path}: {error.strerror or error}"))
        return
    done.restored.append(path)
    done.states[path] = KeptFile(before=expect, end=target)
