"""Copies of "before" content the start snapshot could not keep, made at a tool's first write.

The start snapshot keeps the text of small text files only (``snapshot_max_file_bytes``);
outside git, a larger file or a binary one would then be "not kept" and its change could
not be undone. So before a tool first writes, edits or deletes such a file, its bytes are
copied into undo's content store (:func:`keep_before_copy`), when they are still what the
snapshot measured at the start (same hash) and fit the task's ``undo_max_bytes``; the end
of the task (:func:`~mercury_nb.workspace.undo_store.keep_task_states`) takes them as the
file's "before". A command's writes are not seen ahead: those files stay as the snapshot
kept them. A file git ignores, which the snapshot of a git workspace never records, gets its
state then (:func:`with_ignored_start`), so the change summary and undo see the change.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path

from mercury_nb.workspace import git_state
from mercury_nb.workspace.file_state import FileState, read_state
from mercury_nb.workspace.reading import FileTooLarge, read_bounded
from mercury_nb.workspace.snapshot import Snapshot
from mercury_nb.workspace.undo_store import exact_bytes, put_blob


@dataclass
class BeforeCopies:
    """The copies one task made: workspace-relative path -> sha256, and their bytes;
    ``seen``: every path a tool was about to change (its first change is the one handled)."""

    shas: dict[str, str] = field(default_factory=dict)
    size: int = 0
    seen: set[str] = field(default_factory=set)

    def first(self, rel: str) -> bool:
        """Whether this is the first change of ``rel`` the task's tools make (noted)."""
        if rel in self.seen:
            return False
        self.seen.add(rel)
        return True


def _start_state(snapshot: Snapshot, rel: str) -> FileState | None:
    """The file's state at the start when the snapshot measured it (None: not measured
    there, or absent then; a file clean in git is read from git at the end instead)."""
    if snapshot.git is None:
        return snapshot.files.get(rel)
    return snapshot.git.dirty.get(snapshot.git.repo().prefix + rel)


def with_ignored_start(snapshot: Snapshot, rel: str) -> Snapshot:
    """``snapshot`` with the state of ``rel`` as it is now when git ignores it and the
    snapshot has none: ``git status`` never lists an ignored file (``.env``), so a tool's
    change of it would be no change at all ("no file changes (git-verified)") and undo would
    never see it. Called before a tool's first change of ``rel``: its state then is the
    closest to the start there is (a command may have changed it earlier)."""
    baseline = snapshot.git
    if baseline is None:
        return snapshot
    full = baseline.repo().prefix + rel
    if full in baseline.dirty or not git_state.is_ignored(baseline.repo(), full):
        return snapshot
    root = Path(snapshot.root)
    state = read_state(root / rel, root=root, max_file_bytes=snapshot.max_file_bytes,
                       max_hash_bytes=snapshot.max_hash_bytes)
    return replace(snapshot, git=replace(baseline, dirty={**baseline.dirty, full: state}))


def keep_before_copy(snapshot: Snapshot, copies: BeforeCopies, home: Path | str,
                     max_bytes: int, rel: str) -> bool:
    """Copy ``rel`` (below the snapshot's root) into the store before its first write, when
    the snapshot lacks its exact bytes and it is still as it was at the start; whether a
    copy was made."""
    if rel in copies.shas:
        return False
    state = _start_state(snapshot, rel)
    if state is None or exact_bytes(state) is not None or state.size > max_bytes - copies.size:
        return False
    root = Path(snapshot.root)
    try:
        data = read_bounded(root, root / rel, max_bytes - copies.size)
    except (OSError, FileTooLarge, ValueError):
        return False
    sha = hashlib.sha256(data).hexdigest()
    if sha != state.sha256:  # changed since the start (a command): not its "before"
        return False
    put_blob(home, data)
    copies.shas[rel] = sha
    copies.size += len(data)
    return True
