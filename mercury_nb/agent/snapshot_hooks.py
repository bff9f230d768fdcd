"""The tool callbacks that keep a task's "before" right: the user's unsaved cells, and copies.

Two things only the tools see change what the task's start snapshot must say: a live edit's
save that wrote the user's unsaved notebook cells (they are taken into the snapshot as the
user's), and a first write of a file whose bytes the snapshot could not keep (they are
copied into undo's store first, ``workspace.before_copies``) or which git ignores (its state
is taken then: git never lists it).
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
from typing import Protocol

from mercury_nb.agent.session import TaskSession
from mercury_nb.contract.unsaved_cells import UserCells
from mercury_nb.tools.base import ToolContext
from mercury_nb.workspace.before_copies import keep_before_copy, with_ignored_start
from mercury_nb.workspace.errors import WorkspaceError
from mercury_nb.workspace.snapshot import Snapshot
from mercury_nb.workspace.unsaved_work import with_user_cells


class HoldsSnapshot(Protocol):
    snapshot: Snapshot
    ctx: ToolContext
    session: TaskSession


def into_snapshot(loop: HoldsSnapshot) -> ToolContext:
    """A copy of ``loop.ctx`` whose tools' reports of the user's cells go into ``loop``'s
    start snapshot (the change summary, the gate and undo measure against it), and whose
    first writes keep their file's "before" in the session's copies; each then goes on to
    the callback ``loop.ctx`` had (a sub-agent's: its parent's, whose undo holds them too)."""
    outer_cells, outer_write = loop.ctx.on_user_cells, loop.ctx.before_write

    def take(found: UserCells) -> None:
        loop.snapshot = with_user_cells(loop.snapshot, found)
        if outer_cells is not None:
            outer_cells(found)

    def before_write(shown: str) -> None:
        with contextlib.suppress(WorkspaceError, OSError, ValueError):
            workspace, copies = loop.ctx.root, loop.session.before_copies
            rel = workspace.rel(workspace.resolve(shown))
            if copies.first(rel):  # later writes find the file changed: nothing to take
                config = loop.session.config
                loop.snapshot = with_ignored_start(loop.snapshot, rel)  # .env, say
                keep_before_copy(loop.snapshot, copies, config.home, config.undo_max_bytes,
                                 rel)
        if outer_write is not None:
            outer_write(shown)

    return replace(loop.ctx, on_user_cells=take, before_write=before_write)
