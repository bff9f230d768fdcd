"""Starting delegate_task's sub-agents: each one a task of its own, with a ledger row and a stop.

A task started through this package gets :func:`delegation` as its sub-agent factory. When
its model calls delegate_task, :class:`Delegation` starts the sub-agent the way every run
starts here: it names it ``<parent>.<n>`` (numbers continue after a resume), records it in
the ledger as a child of the parent (listed, watched and shown like any task, never picked
by a plain "continue"), and runs it as its own ``asyncio.Task`` registered for stop
requests, so ``stop <parent>.<n>`` from any process ends just the sub-agent (the parent's
tool result then says ``aborted``). A stop of the parent ends both.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from dataclasses import dataclass, field

from mercury_nb.agent.subagent import (
    SubagentFactory,
    SubagentParent,
    run_subagent,
    subagent_sink,
)
from mercury_nb.contract.recovery.subagent_supervisor import SubagentRun
from mercury_nb.ledger.access import LedgerHandle
from mercury_nb.ledger.recorder import TaskRecorder
from mercury_nb.runs import stopping
from mercury_nb.tools.base import ToolContext, ToolError
from mercury_nb.workspace.snapshot import take_snapshot

LATE_STOP = ("sub-agent {sub_id} was stopped while it was finishing: whatever it wrote is on "
             "disk, but it reported nothing. Look at the files before you rely on them.")
"""delegate_task's error when a stop reaches a sub-agent after its last step."""


def delegation(handle: LedgerHandle | None) -> SubagentFactory:
    """The sub-agent factory for a task recorded in ``handle``'s ledger (None: unrecorded,
    and its sub-agents can be stopped only with their parent)."""

    def factory(parent: SubagentParent) -> Delegation:
        return Delegation(parent, handle)

    return factory


@dataclass
class Delegation:
    """The runner one parent task's delegate_task calls (a ``SubagentRunner``)."""

    parent: SubagentParent
    handle: LedgerHandle | None
    _started: int | None = field(default=None, repr=False)
    """Sub-agents numbered so far, counting those of earlier runs of a resumed parent."""

    async def __call__(self, task: str, ctx: ToolContext) -> SubagentRun:
        sub_id = await self._next_id()
        config = ctx.config
        sink = subagent_sink(sub_id, self.parent.on_event)
        recorder = None
        if self.handle is not None:
            recorder = TaskRecorder(self.handle.writer, sub_id, task, config,
                                    parent=self.parent.task_id)
            sink = recorder.wrap(sink)
        snapshot = await asyncio.to_thread(take_snapshot, ctx.root.root, config)
        here = asyncio.current_task()
        stops_before = here.cancelling() if here is not None else 0
        child = asyncio.create_task(run_subagent(task, sub_id, self.parent, ctx, sink, snapshot),
                                    name=f"mercury:{sub_id}")
        if self.handle is not None:
            stopping.register(sub_id, child, config.home)
        try:
            run = await child
        except asyncio.CancelledError as error:
            if recorder is not None:
                recorder.abandon(error)  # recorded aborted, unless it recorded its own end
            if here is not None and here.cancelling() > stops_before:
                child.cancel()  # the parent was stopped: the sub-agent ends with it
                with contextlib.suppress(asyncio.CancelledError):
                    await child
                raise
            raise ToolError(LATE_STOP.format(sub_id=sub_id)) from None
        except BaseException as error:
            if recorder is not None:
                recorder.abandon(error)
            raise
        if here is not None and here.cancelling() > stops_before:
            # the parent was stopped while its sub-agent finished (the stop reached the
            # sub-agent, which ended aborted): the parent's stop goes on up
            raise asyncio.CancelledError
        return run

    async def _next_id(self) -> str:
        if self._started is None:
            self._started = await asyncio.to_thread(self._numbered_before)
        self._started += 1
        return f"{self.parent.task_id}.{self._started}"

    def _numbered_before(self) -> int:
        """The highest ``<parent>.<n>`` the ledger holds (0 without a ledger or any)."""
        if self.handle is None:
            return 0
        try:
            self.handle.flush()
            children = self.handle.ledger.children(self.parent.task_id)
        except sqlite3.Error:
            return 0
        numbers = [child.id.rsplit(".", 1)[-1] for child in children]
        return max((int(n) for n in numbers if n.isdigit()), default=0)
