"""The undo planner: per file (before, end of task, now), what undo does or why it leaves it.

Pure: the caller reads the states (hashes) and the task's recorded commands; the plan says
which file is restored, deleted or recreated, which is left as is (and why), and what no
undo can take back (the commands the task ran, state changed in the kernel, files too
large to keep). The workspace's edge applies it with a compare-and-swap per file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

LEFT_CHANGED = "left as is: {path} changed after the task (yours?)"
"""A file whose content is not the task's end state: never overwritten."""
LEFT_NOT_KEPT = "left as is: {path}: {why}"
"""A file whose "before" content was not kept; ``why`` is :data:`TOO_LARGE` or another
reason the store gave."""
TOO_LARGE = "too large to keep"
NOT_UNDOABLE_COMMAND = "the command it ran: {command}"
NOT_UNDOABLE_FILE = "{path}: {why}"
NOT_UNDOABLE_KERNEL = "state changed in the kernel ({count} run_in_kernel call{s})"


@dataclass(frozen=True)
class FileStates:
    """One file the task changed. A hash is ``None`` when the file is (was) absent."""

    path: str
    before: str | None
    end: str | None
    now: str | None
    unkept: str | None = None
    """Why the "before" content is not in the store (None: it is, or the file was created)."""


@dataclass(frozen=True)
class Restore:
    """Write the kept "before" content (hash ``before``) over the file now at ``expect``."""

    path: str
    before: str
    expect: str


@dataclass(frozen=True)
class DeleteCreated:
    """Delete a file the task created, if it is still at ``expect``."""

    path: str
    expect: str


@dataclass(frozen=True)
class RecreateDeleted:
    """Write back a file the task deleted, if it is still absent."""

    path: str
    before: str


@dataclass(frozen=True)
class Left:
    """Leave ``path`` as is; ``why`` says so in words the user reads."""

    path: str
    why: str


Action: TypeAlias = Restore | DeleteCreated | RecreateDeleted | Left


@dataclass(frozen=True)
class Ran:
    """What the task (and its sub-agents) ran that no undo takes back."""

    commands: tuple[str, ...] = ()
    kernel_runs: int = 0


@dataclass(frozen=True)
class UndoPlan:
    actions: tuple[Action, ...]
    not_undoable: tuple[str, ...]


def plan_file(file: FileStates) -> Action | None:
    """What undo does with one file; None when it is already as it was before the task."""
    if file.now == file.before:
        return None  # already back (or never really changed)
    if file.now != file.end:
        return Left(file.path, LEFT_CHANGED.format(path=file.path))
    if file.before is None:
        assert file.now is not None  # now != before (None)
        return DeleteCreated(file.path, file.now)
    if file.unkept is not None:
        return Left(file.path, LEFT_NOT_KEPT.format(path=file.path, why=file.unkept))
    if file.now is None:
        return RecreateDeleted(file.path, file.before)
    return Restore(file.path, file.before, file.now)


def plan_undo(files: tuple[FileStates, ...], ran: Ran) -> UndoPlan:
    """The undo of a task: an action per file that needs one, and what cannot be undone."""
    actions: list[Action] = []
    not_undoable: list[str] = []
    for file in sorted(files, key=lambda f: f.path):
        action = plan_file(file)
        if action is None:
            continue
        actions.append(action)
        if isinstance(action, Left) and file.unkept is not None and file.now == file.end:
            not_undoable.append(NOT_UNDOABLE_FILE.format(path=file.path, why=file.unkept))
    not_undoable.extend(NOT_UNDOABLE_COMMAND.format(command=c) for c in dict.fromkeys(ran.commands))
    if ran.kernel_runs:
        s = "" if ran.kernel_runs == 1 else "s"
        not_undoable.append(NOT_UNDOABLE_KERNEL.format(count=ran.kernel_runs, s=s))
    return UndoPlan(tuple(actions), tuple(not_undoable))
