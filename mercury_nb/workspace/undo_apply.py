"""Applying an undo plan to disk: per file, a compare-and-swap right before one atomic write.

Each file is re-read just before it is written: when its content is no longer what the plan
saw, it is left as is and named. What a file held before the undo wrote it is kept in the
content store, so the undo can itself be undone (:class:`Applied` carries those states).
A notebook open in JupyterLab is undone cell by cell in the open document instead
(:mod:`mercury_nb.runs.undo_live`); one that is not open, or does not answer, goes back through
disk like any file (the panel then reloads it).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import assert_never

from mercury_nb.contract.undo_plan import (
    LEFT_CHANGED,
    LEFT_NOT_KEPT,
    DeleteCreated,
    Left,
    RecreateDeleted,
    Restore,
    UndoPlan,
)
from mercury_nb.workspace.atomic import atomic_write_bytes
from mercury_nb.workspace.dirfd import unlink_at
from mercury_nb.workspace.file_state import DEFAULT_MAX_HASH_BYTES
from mercury_nb.workspace.reading import read_bounded
from mercury_nb.workspace.undo_store import KeptFile, current_hash, get_blob, put_blob

NOT_IN_STORE = "its earlier content is no longer in the store"


@dataclass
class Applied:
    """What an undo did: the files restored, those left (path, why), and each written file's
    states for the undo's own record (before the undo -> after it)."""

    restored: list[str] = field(default_factory=list)
    left: list[tuple[str, str]] = field(default_factory=list)
    states: dict[str, KeptFile] = field(default_factory=dict)


def _read_now(root: Path, path: str, limit: int) -> bytes | None:
    """The file's bytes now (None: absent, not a regular file, or over ``limit``)."""
    try:
        return read_bounded(root, root / path, limit)
    except (OSError, ValueError):  # FileTooLarge is an OSError
        return None


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
            done.left.append((path, LEFT_NOT_KEPT.format(path=path, why=NOT_IN_STORE)))
            return
    if expect is None:  # the compare, right before: the file must still be absent
        if current_hash(root, path, max_hash_bytes) is not None:
            done.left.append((path, LEFT_CHANGED.format(path=path)))
            return
    else:  # the compare on the bytes read, kept so this undo can be undone
        now = _read_now(root, path, max_hash_bytes)
        if now is None or hashlib.sha256(now).hexdigest() != expect:
            done.left.append((path, LEFT_CHANGED.format(path=path)))
            return
        put_blob(home, now)
    try:
        if data is None:
            unlink_at(root, root / path)
        else:
            atomic_write_bytes(root / path, data, make_parents=True, root=root)
    except OSError as error:
        why = str(error.strerror or error)
        done.left.append((path, LEFT_NOT_KEPT.format(path=path, why=why)))
        return
    done.restored.append(path)
    done.states[path] = KeptFile(before=expect, end=target)
