"""Runs one delegated sub-agent's session in the parent's workspace under its supervisor.

The runs layer starts a sub-agent (:mod:`mercury_nb.runs.delegation`: its id, its ledger
row, its own stoppable ``asyncio.Task``); this module is what that task runs. A sub-agent
is an ordinary :class:`~mercury_nb.agent.loop.AgentLoop` with its own
:class:`~mercury_nb.agent.session.TaskSession` (id ``<parent>.<n>``), step budget, router
state and start snapshot, the parent's models and config, and the parent's tools without
delegate_task (one level of delegation). Its progress reaches the parent's sink as Notice
lines prefixed ``[<id>]``: notices, each finished tool call, automatic resumes and the end;
never its tokens, step starts or checkpoints (those reach its own sink, the ledger's). The
pure :func:`~mercury_nb.contract.recovery.subagent_supervisor.step_supervisor` decides after
every run whether to resume it from its checkpoint or report to the parent. A stop of the
sub-agent alone ends it ``aborted``, and the parent hears so in its tool result.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import assert_never

from mercury_nb.agent.checkpoint import (
    restore_router_state,
    restore_session,
    session_checkpoint,
)
from mercury_nb.agent.events import (
    AgentEvent,
    EventSink,
    Notice,
    TaskFinished,
    TaskStarted,
    ToolFinished,
)
from mercury_nb.agent.lifecycle import measured_outcome, until_ending
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
from mercury_nb.contract.shared_workspace import task_excerpt
from mercury_nb.tools.base import SubagentRunner, Tool, ToolContext
from mercury_nb.tools.delegate import DELEGATE_TOOL_NAME
from mercury_nb.tools.function_tool import workspace_of
from mercury_nb.tools.registry import ToolRegistry
from mercury_nb.transport.protocol import ChatModel
from mercury_nb.workspace.snapshot import Snapshot


@dataclass(frozen=True)
class SubagentParent:
    """What a sub-agent takes from the task that delegates it: the parent's id (sub-agents
    are ``<id>.<n>``), its model chain, its tools (a sub-agent gets them without
    delegate_task) and its event sink (a sub-agent's progress arrives there as prefixed
    Notice lines)."""

    task_id: str
    models: tuple[ChatModel, ...]
    registry: ToolRegistry
    on_event: EventSink
    session: TaskSession | None = None
    """The parent's session: every token a sub-agent uses counts there too, and its budgets
    (the parent's settings) count the whole task's."""


SubagentFactory = Callable[[SubagentParent], SubagentRunner]
"""Builds the runner delegate_task calls for one parent task; the runs layer provides it
(:func:`mercury_nb.runs.delegation.delegation`). Without one, a task cannot delegate."""


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


async def run_subagent(task: str, sub_id: str, parent: SubagentParent, ctx: ToolContext,
                       sink: EventSink, snapshot: Snapshot,
                       shown_task: str | None = None) -> SubagentRun:
    """Run ``task`` as sub-agent ``sub_id`` of ``parent`` until the supervisor reports to the
    parent. ``sink`` gets the sub-agent's own events (its start and finish included) and
    forwards the parent's share of them (:func:`subagent_sink`); ``snapshot`` is its start.

    A sub-agent has one step budget at a time: no automatic in-loop continuations, so a
    spent budget pauses it and the supervisor decides (up to ``subagent_max_resumes``).
    Cancelling the task that runs this ends the sub-agent ``aborted``, files kept."""
    config = ctx.config.with_changes(max_auto_continuations=0)
    root = workspace_of(ctx)
    session = TaskSession.start(task, config, sub_id)
    session.usage_to = parent.session
    session.shown_task = shown_task  # its row's masked text (None: its outcome masks it)
    session.messages = [system_message(str(root.root), config.mode), user_message(task)]
    loop = AgentLoop(
        session=session,
        models=parent.models,
        registry=subagent_registry(parent.registry),
        ctx=ToolContext(root=root, config=config, notice=lambda text: sink(Notice(str(text))),
                        ask_handler=ctx.ask_handler, permissions=ctx.permissions,
                        live_edits=ctx.live_edits, on_user_cells=ctx.on_user_cells,
                        before_write=ctx.before_write,
                        process_scope=ctx.process_scope),  # its leftovers end with the parent
        on_event=sink,
        snapshot=snapshot,
    )
    parent.on_event(Notice(f"[{sub_id}] sub-agent started: {task_excerpt(task)}", "subagent"))
    sink(TaskStarted(sub_id, task, parent.models[0].name, config.max_steps))
    supervisor = SupervisorState()
    while True:
        # stopped: ends aborted and the supervisor reports it to the parent (the runs layer
        # re-raises a parent's stop)
        ending: Ending = await until_ending(loop.run, loop.session)
        supervisor, decision = step_supervisor(supervisor, SubOutcome(task, ending), config)
        match decision:
            case ResumeSub(nudge=nudge, notice=notice):
                sink(Notice(notice))
                loop = resumed(loop, nudge)
            case ReportToParent() as report:
                break
            case _ as unreachable:
                assert_never(unreachable)
    if parent.session is not None and loop.session.user_denied is not None:
        # the user denied it in this task's run: the parent's own pause names it too
        parent.session.user_denied = loop.session.user_denied
    outcome = await measured_outcome(loop.session, ending, loop.snapshot, root.root)
    run = SubagentRun(sub_id, outcome, report)
    sink(TaskFinished(run.outcome))
    parent.on_event(Notice(_finished_line(run), "subagent"))
    return run


def resumed(loop: AgentLoop, nudge: str) -> AgentLoop:
    """The same session continued from its checkpoint (the JSON a ledger would keep, but for
    the start snapshot, which stays the one in memory), with a fresh step budget, the
    continuation counters carried over and ``nudge`` appended."""
    data = json.loads(json.dumps(session_checkpoint(loop.session, loop.state)))
    config = loop.config  # the live config: it still carries the API key
    session = restore_session(data, config)
    session.usage_to = loop.session.usage_to  # its tokens go on counting in the parent's
    session.user_denied = loop.session.user_denied  # the same run: what the user denied holds
    session.shown_task = loop.session.shown_task
    session.messages.append(user_message(nudge))
    return AgentLoop(
        session=session,
        models=loop.models,
        registry=loop.registry,
        ctx=loop.ctx,
        on_event=loop.on_event,
        snapshot=loop.snapshot,  # the start snapshot in memory, every "before" text kept
        state=restore_router_state(data, session.task, config),
    )
