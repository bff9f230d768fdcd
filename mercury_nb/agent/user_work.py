"""The user's unsaved notebook cells a live edit's save wrote: taken into the task's "before"."""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

from mercury_nb.contract.unsaved_cells import UserCells
from mercury_nb.tools.base import ToolContext
from mercury_nb.workspace.snapshot import Snapshot
from mercury_nb.workspace.unsaved_work import with_user_cells


class HoldsSnapshot(Protocol):
    snapshot: Snapshot
    ctx: ToolContext


def into_snapshot(loop: HoldsSnapshot) -> ToolContext:
    """A copy of ``loop.ctx`` whose tools' reports of the user's cells go into ``loop``'s
    start snapshot (the change summary, the gate and undo measure against it), then on to
    the callback ``loop.ctx`` had (a sub-agent's: its parent's, whose undo holds them too)."""
    outer = loop.ctx.on_user_cells

    def take(found: UserCells) -> None:
        loop.snapshot = with_user_cells(loop.snapshot, found)
        if outer is not None:
            outer(found)

    return replace(loop.ctx, on_user_cells=take)
