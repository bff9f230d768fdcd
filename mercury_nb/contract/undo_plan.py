"""The undo planner: per file (before, end of task, now), what undo does or why it leaves it.

Pure: the caller reads the states (hashes) and the task's recorded commands; the plan says
which file is restored, deleted or recreated, which is left as is (and why), and what no
undo can take back (the commands the task ran, state changed in the kernel, files too
large to keep). The workspace's edge applies it with a compare-and-swap per file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

LEFT_CHANGED = "left as is: {path} changed after the task (yours?)"
"""A file whose content is not the task's end state: never overwritten."""
LEFT_NOT_KEPT = "left as is: {path}: {why}"
"""A file whose "before" content was not kept; ``why`` is :data:`TOO_LARGE` or another
reason the store gave."""
TOO_LARGE = "too large to keep"
NOT_UNDOABLE_COMMAND = "the command it ran: {command}"
NOT_UNDOABLE_FILE = "{path}: {why}"
NOT_UNDOABLE_KERNEL = "state changed in the kernel ({count} run{s} of code there)"
STILL_RUNNING = "task {task_id} is still running: stop it before undoing it"
NOT_KEPT = ("task {task_id} kept no record for undo (it ran before undo was recorded, or its "
            "record under {home} is gone)")
BUSY = "task {other} is running in {workspace}: undo {task_id} after it ends"


@dataclass(frozen=True)
class UndoAsked:
    """What the undo of a task depends on: its status, a task running in its workspace now
    (its id, or None), whether it kept states for undo and whether it changed files."""

    task_id: str
    running: bool
    busy: str | None
    workspace: str
    kept: bool
    changed: bool
    home: str


@dataclass(frozen=True)
class UndoRefused:
    """The undo does not run: ``message`` says why."""

    kind: Literal["cannot-continue", "workspace-busy"]
    message: str


def refuse_undo(asked: UndoAsked) -> UndoRefused | None:
    """Why the undo cannot run now (None: it can): the task still runs, another task runs in
    its workspace (their writes would cross), or it changed files and kept no record."""
    if asked.running:
        return UndoRefused("cannot-continue", STILL_RUNNING.format(task_id=asked.task_id))
    if asked.busy is not None:
        return UndoRefused("workspace-busy", BUSY.format(
            other=asked.busy, workspace=asked.workspace, task_id=asked.task_id))
    if not asked.kept and asked.changed:
        return UndoRefused("cannot-continue", NOT_KEPT.format(task_id=asked.task_id,
                                                               home=asked.home))
    return None


@dataclass(frozen=True)
class FileStates:
    """One file the task changed. A hash is ``None`` when the file is (was) absent."""

    path: str
    before: str | None
    end: str | None
    now: str | None
    unkept: str | None = None
    """Why the "before" content is not in the store (None: it is, or the file was created)."""
    live: bool = False
    """A notebook open in JupyterLab whose content at both ends is kept: undone cell by cell
    in the open document (each cell compared there), not swapped on disk."""


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


@dataclass(frozen=True)
class LiveRestore:
    """Undo the open notebook ``path`` cell by cell, from the kept end state (hash ``end``)
    back to the kept "before" (hash ``before``); a cell changed since is left and named."""

    path: str
    before: str
    end: str


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
    live: tuple[LiveRestore, ...] = ()
    """The open notebooks undone in JupyterLab (one that does not answer is planned again
    with ``live=False``, the disk swap)."""


def plan_file(file: FileStates) -> Action | LiveRestore | None:
    """What undo does with one file; None when it is already as it was before the task."""
    if file.now == file.before:
        return None  # already back (or never really changed)
    if (file.live and file.before is not None and file.end is not None
            and file.now is not None and file.unkept is None):
        return LiveRestore(file.path, file.before, file.end)  # each cell compared in Lab
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
    live: list[LiveRestore] = []
    not_undoable: list[str] = []
    for file in sorted(files, key=lambda f: f.path):
        action = plan_file(file)
        if action is None:
            continue
        if isinstance(action, LiveRestore):
            live.append(action)
            continue
        actions.append(action)
        if isinstance(action, Left) and file.unkept is not None and file.now == file.end:
            not_undoable.append(NOT_UNDOABLE_FILE.format(path=file.path, why=file.unkept))
    not_undoable.extend(NOT_UNDOABLE_COMMAND.format(command=c) for c in dict.fromkeys(ran.commands))
    if ran.kernel_runs:
        s = "" if ran.kernel_runs == 1 else "s"
        not_undoable.append(NOT_UNDOABLE_KERNEL.format(count=ran.kernel_runs, s=s))
    return UndoPlan(tuple(actions), tuple(not_undoable), tuple(live))
