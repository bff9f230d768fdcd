"""Runs a delegated sub-agent in the parent's workspace and carries out its supervisor's calls.

The sub-agent is an ordinary :class:`~mercury_nb.agent.loop.AgentLoop` with its own
:class:`~mercury_nb.agent.session.TaskSession` (id ``<parent>.<n>``), step budget, router
state and start snapshot, the parent's models and config, and the parent's tools without
delegate_task (one level of delegation). Its progress reaches the parent's sink as Notice
lines prefixed ``[<id>]``: notices, each finished tool call, automatic resumes and the end;
never its tokens, step starts or checkpoints. The pure
:func:`~mercury_nb.contract.recovery.subagent_supervisor.step_supervisor` decides after
every run whether to resume it from its checkpoint or report to the parent. Cancellation propagates.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import assert_never

from mercury_nb.agent.checkpoint import (
    checkpoint_of,
    restore_router_state,
    restore_session,
    restore_snapshot,
)
from mercury_nb.agent.events import AgentEvent, EventSink, Notice, ToolFinished
from mercury_nb.agent.finish import build_outcome
from mercury_nb.agent.loop import AgentLoop
from mercury_nb.agent.prompts import system_message, user_message
from mercury_nb.agent.session import TaskSession
from mercury_nb.contract.endings import Ending
from mercury_nb.contract.recovery.subagent_supervisor import (
    ReportToParent,
    ResumeSub,
    SubagentRun,
    SubOutcome,
    SupervisorState,
    step_supervisor,
)
from mercury_nb.tools.base import Tool, ToolContext
from mercury_nb.tools.delegate import DELEGATE_TOOL_NAME
from mercury_nb.tools.function_tool import workspace_of
from mercury_nb.tools.registry import ToolRegistry
from mercury_nb.transport.protocol import ChatModel
from mercury_nb.workspace.changes import measure_changes
from mercury_nb.workspace.snapshot import take_snapshot

TASK_EXCERPT_CHARS = 80
"""Characters of the sub-task shown in the parent's "started" line."""


@dataclass(frozen=True)
class SubagentLauncher:
    """The sub-agent runner the parent loop injects into its tool context (delegate_task
    calls it): the parent's task id (sub-agents are ``<id>.<n>``), its model chain, its tools
    (a sub-agent gets them without delegate_task) and its event sink (a sub-agent's progress
    arrives there as prefixed Notice lines)."""

    task_id: str
    models: Sequence[ChatModel]
    registry: ToolRegistry
    on_event: EventSink

    async def __call__(self, task: str, ctx: ToolContext) -> SubagentRun:
        return await run_subagent(task, self, ctx)


def next_sub_id(parent_id: str, ctx: ToolContext) -> str:
    """``<parent>.<n>``, counting the sub-agents of this task from 1."""
    ctx.delegated += 1
    return f"{parent_id}.{ctx.delegated}"


def subagent_registry(registry: ToolRegistry) -> ToolRegistry:
    """The parent's tools without delegate_task: a sub-agent does not delegate again."""
    tools: list[Tool] = []
    for name in registry.names():
        tool = registry.get(name)
        if tool is not None and name != DELEGATE_TOOL_NAME:
            tools.append(tool)
    return ToolRegistry(tools)


def subagent_sink(sub_id: str, parent: EventSink) -> EventSink:
    """Forwards a sub-agent's notices and finished tool calls as ``[<id>] ...`` notices."""

    def forward(event: AgentEvent) -> None:
        match event:
            case Notice(text=text):
                parent(Notice(f"[{sub_id}] {text}", "subagent"))
            case ToolFinished(ok=ok, summary=summary):
                parent(Notice(f"[{sub_id}] {'✓' if ok else '✗'} {summary}", "subagent"))
            case _:
                pass  # tokens, step starts, checkpoints and its own start/finish stay here

    return forward


def _finished_line(run: SubagentRun) -> str:
    report = run.report
    if report.why is None:
        return f"[{run.sub_id}] {report.status} ({run.outcome.steps} steps)"
    return f"[{run.sub_id}] {report.status} — {report.why}"


async def run_subagent(task: str, parent: SubagentLauncher, ctx: ToolContext) -> SubagentRun:
    """Run ``task`` as a sub-agent of ``parent`` until the supervisor reports to the parent.

    A sub-agent has one step budget at a time: no automatic in-loop continuations, so a
    spent budget pauses it and the supervisor decides (up to ``subagent_max_resumes``)."""
    config = ctx.config.with_changes(max_auto_continuations=0)
    root = workspace_of(ctx)
    sub_id = next_sub_id(parent.task_id, ctx)
    sink = subagent_sink(sub_id, parent.on_event)
    session = TaskSession.start(task, config, sub_id)
    session.messages = [system_message(str(root.root), config.mode), user_message(task)]
    snapshot = await asyncio.to_thread(take_snapshot, root.root, config)
    loop = AgentLoop(
        session=session,
        models=parent.models,
        registry=subagent_registry(parent.registry),
        ctx=ToolContext(root=root, config=config, notice=lambda text: sink(Notice(str(text))),
                        ask_handler=ctx.ask_handler,
                        process_scope=ctx.process_scope),  # its leftovers end with the parent
        on_event=sink,
        snapshot=snapshot,
    )
    parent.on_event(Notice(f"[{sub_id}] sub-agent started: {_excerpt(task)}", "subagent"))
    supervisor = SupervisorState()
    while True:
        ending: Ending = await loop.run()
        supervisor, decision = step_supervisor(supervisor, SubOutcome(task, ending), config)
        match decision:
            case ResumeSub(nudge=nudge, notice=notice):
                sink(Notice(notice))
                loop = resumed(loop, nudge)
            case ReportToParent() as report:
                break
            case _ as unreachable:
                assert_never(unreachable)
    changes = await asyncio.to_thread(measure_changes, loop.snapshot, root.root)
    run = SubagentRun(sub_id, build_outcome(loop.session, ending, changes), report)
    parent.on_event(Notice(_finished_line(run), "subagent"))
    return run


def resumed(loop: AgentLoop, nudge: str) -> AgentLoop:
    """The same session continued from its checkpoint (the JSON a ledger would keep), with a
    fresh step budget, the continuation counters carried over and ``nudge`` appended."""
    data = json.loads(json.dumps(checkpoint_of(loop)))
    config = loop.config  # the live config: it still carries the API key
    session = restore_session(data, config)
    session.messages.append(user_message(nudge))
    return AgentLoop(
        session=session,
        models=loop.models,
        registry=loop.registry,
        ctx=loop.ctx,
        on_event=loop.on_event,
        snapshot=restore_snapshot(data),
        state=restore_router_state(data, session.task, config),
    )


def _excerpt(task: str) -> str:
    line = " ".join(task.split())
    return line if len(line) <= TASK_EXCERPT_CHARS else line[: TASK_EXCERPT_CHARS - 1] + "…"
