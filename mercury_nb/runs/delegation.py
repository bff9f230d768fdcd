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
from collections.abc import Callable
from dataclasses import dataclass, field

from mercury_nb.agent.subagent import SubagentFactory, SubagentParent, subagent_sink
from mercury_nb.contract.recovery.subagent_supervisor import SubagentRun
from mercury_nb.ledger.access import LedgerHandle
from mercury_nb.runs.lookup import Refusal
from mercury_nb.runs.registry import Run
from mercury_nb.runs.request import SubagentRequest
from mercury_nb.tools.base import ToolContext, ToolError

LATE_STOP = ("sub-agent {sub_id} was stopped while it was finishing: whatever it wrote is on "
             "disk, but it reported nothing. Look at the files before you rely on them.")
"""delegate_task's error when a stop reaches a sub-agent after its last step."""


Submit = Callable[[SubagentRequest], "Run[SubagentRun] | Refusal"]
"""The door a sub-agent is submitted through (:meth:`~mercury_nb.runs.runner.Runner.submit`)."""


def delegation(handle: LedgerHandle | None, submit: Submit) -> SubagentFactory:
    """The sub-agent factory for a task recorded in ``handle``'s ledger (None: unrecorded,
    and its sub-agents can be stopped only with their parent); each sub-agent is submitted
    through ``submit``, the one door."""

    def factory(parent: SubagentParent) -> Delegation:
        return Delegation(parent, handle, submit)

    return factory


@dataclass
class Delegation:
    """The runner one parent task's delegate_task calls (a ``SubagentRunner``)."""

    parent: SubagentParent
    handle: LedgerHandle | None
    submit: Submit
    _started: int | None = field(default=None, repr=False)
    """Sub-agents numbered so far, counting those of earlier runs of a resumed parent."""

    async def __call__(self, task: str, ctx: ToolContext) -> SubagentRun:
        sub_id = await self._next_id()
        request = SubagentRequest(task, sub_id, self.parent, ctx,
                                  subagent_sink(sub_id, self.parent.on_event), self.handle)
        here = asyncio.current_task()
        stops_before = here.cancelling() if here is not None else 0
        child = self.submit(request)  # the one door, as every run
        if isinstance(child, Refusal):
            raise ToolError(child.message)
        try:
            run = await child.task
        except asyncio.CancelledError:
            if here is not None and here.cancelling() > stops_before:
                child.stop()  # the parent was stopped: the sub-agent ends with it
                with contextlib.suppress(asyncio.CancelledError):
                    await child.task
                raise
            raise ToolError(LATE_STOP.format(sub_id=sub_id)) from None
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
