"""What a delegated sub-agent's one Run runs: its recorder, its start snapshot, its session."""

from __future__ import annotations

import asyncio

from mercury_nb.agent.subagent import run_subagent
from mercury_nb.contract.recovery.subagent_supervisor import SubagentRun
from mercury_nb.ledger.recorder import TaskRecorder
from mercury_nb.runs.request import SubagentRequest
from mercury_nb.workspace.snapshot import take_snapshot


async def run_delegated(request: SubagentRequest) -> SubagentRun:
    """Record the sub-agent as a child of its parent (when the parent is recorded), take its
    start snapshot and run it; a stop ends it ``aborted`` (recorded so even when it is
    stopped before its first event)."""
    recorder = None
    sink = request.sink
    config = request.ctx.config
    if request.handle is not None:
        recorder = TaskRecorder(request.handle.writer, request.sub_id, request.task, config,
                                parent=request.parent.task_id)
        sink = recorder.wrap(sink)
    try:
        snapshot = await asyncio.to_thread(take_snapshot, request.ctx.root.root, config)
        return await run_subagent(request.task, request.sub_id, request.parent, request.ctx,
                                  sink, snapshot,
                                  recorder.header.task if recorder is not None else None)
    except BaseException as error:
        if recorder is not None:
            recorder.abandon(error)  # recorded aborted, unless it recorded its own end
        raise
