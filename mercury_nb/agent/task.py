"""Starting a task: a new one from its text, or a restored session, through one AgentLoop.

:func:`run_new_session` and :func:`run_session` build what the loop needs (the model chain, the
typed tool context with its injected callbacks and the sub-agent runner the runs layer
provides), announce the task,
run the loop, and turn a cancellation (Stop, or a stop request from any process) into the
``aborted`` ending with the change summary of what was written.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from mercury_nb.agent.events import EventSink, Notice, TaskFinished, TaskStarted
from mercury_nb.agent.grounded_answers import answer_grounding, mark_unread
from mercury_nb.agent.kernel_context import (
    Attachments,
    attachments,
    first_request_text,
    origin_text,
)
from mercury_nb.agent.lifecycle import measured_outcome, setup_failed, until_ending
from mercury_nb.agent.loop import AgentLoop
from mercury_nb.agent.prompts import system_message, user_message
from mercury_nb.agent.session import TaskSession
from mercury_nb.agent.subagent import SubagentFactory, SubagentParent
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import Ending
from mercury_nb.contract.outcome import TaskOutcome
from mercury_nb.contract.permissions import offers_mutating_tools
from mercury_nb.contract.turns.router_state import RouterState
from mercury_nb.tools.approval import Permissions
from mercury_nb.tools.base import AskHandler, LiveEdits, SubagentRunner, ToolContext
from mercury_nb.tools.kernel_access import KernelAccess
from mercury_nb.tools.kernel_code import still_running, stopped_code
from mercury_nb.tools.kernel_tools import NOT_INTERRUPTED, STOPPED_LINE
from mercury_nb.tools.processes import kill_scope
from mercury_nb.tools.registry import ToolRegistry, default_registry
from mercury_nb.transport.protocol import ChatModel
from mercury_nb.workspace.confinement import Workspace
from mercury_nb.workspace.snapshot import Snapshot, take_snapshot


async def run_new_session(
    task: str,
    config: MercuryConfig,
    *,
    model: ChatModel | None = None,
    on_event: EventSink | None = None,
    task_id: str | None = None,
    registry: ToolRegistry | None = None,
    ask_user: AskHandler | None = None,
    subagents: SubagentFactory | None = None,
    kernel: KernelAccess | None = None,
    permissions: Permissions | None = None,
    live_edits: LiveEdits | None = None,
    shown_task: str | None = None,
) -> TaskOutcome:
    """Run one task to an honest ending. Cancellation (Stop) ends as ``aborted``,
    keeping every file already written.

    ``model`` runs the task instead of resolving the configured chain; ``config`` already
    names it (the door's one override: :func:`mercury_nb.runs.resolve.with_model`).
    ``ask_user`` answers the ask_user tool (the kernel passes one that shows a widget);
    without it the run is headless.
    ``subagents`` starts delegate_task's sub-agents (the runs layer passes it; without it
    delegate_task answers that it is not available). ``kernel``: the user's kernel (a task
    from a cell): its tools are offered and the task's ``@name`` variables attached. Front
    ends start tasks through :mod:`mercury_nb.runs`, which calls this.
    """
    sink: EventSink = on_event or (lambda event: None)
    session = TaskSession.start(task, config, task_id)
    session.shown_task = shown_task  # the door's masked text: the outcome shows it as it is
    root = Workspace(config.workdir)
    found = attachments(session.task, kernel, config)
    session.messages = [system_message(str(root.root), config.mode),
                        user_message(first_request_text(session.task, found,
                                                        origin_text(kernel, root.root)))]
    snapshot = await asyncio.to_thread(take_snapshot, root.root, config)
    try:
        models = [model] if model is not None else resolve_chain(config)
    except (LookupError, ValueError) as error:
        return await setup_failed(session, snapshot, root.root, error, sink)
    return await run_session(session, snapshot, models, sink=sink, registry=registry,
                             ask_user=ask_user, subagents=subagents, ground=True,
                             kernel=kernel, found=found, permissions=permissions,
                             live_edits=live_edits)


async def run_session(
    session: TaskSession,
    snapshot: Snapshot,
    models: Sequence[ChatModel],
    *,
    sink: EventSink,
    registry: ToolRegistry | None = None,
    ask_user: AskHandler | None = None,
    state: RouterState | None = None,
    subagents: SubagentFactory | None = None,
    ground: bool = False,
    kernel: KernelAccess | None = None,
    found: Attachments | None = None,
    permissions: Permissions | None = None,
    live_edits: LiveEdits | None = None,
) -> TaskOutcome:
    """Announce, run and finish ``session``: a new one from :func:`run_new_session`, or one restored
    from a checkpoint with its router ``state`` (:mod:`mercury_nb.agent.resume`). Stop ends
    as ``aborted``; the change summary is measured against ``snapshot``. ``ground``: a new
    question that names workspace files gets them read first (``agent.grounded_answers``).
    ``kernel``: the user's kernel (its tools offered); ``found``: the ``@name`` variables
    attached to the first request (the start line names them) and the notes about them."""
    config = session.config
    root = Workspace(config.workdir)
    found = found or Attachments()
    sink(TaskStarted(session.task_id, session.task, models[0].name, config.max_steps,
                     attached=found.attached))
    for note in found.notes:
        sink(Notice(note))
    tools = registry or default_registry(kernel=kernel is not None)
    if not offers_mutating_tools(config.permissions):  # read-only: nothing that writes or runs
        tools = ToolRegistry(t for name in tools.names() if not tools.is_mutating(name)
                             and (t := tools.get(name)) is not None)
    parent = SubagentParent(session.task_id, tuple(models), tools, sink, session)
    ctx = tool_context(root, config, sink, ask_user, task_id=session.task_id,
                       subagents=subagents(parent) if subagents is not None else None,
                       kernel=kernel, permissions=permissions, live_edits=live_edits)
    state = state or RouterState.start(session.task, config)  # the task read once, for both
    loop = AgentLoop(
        session=session,
        models=models,
        registry=tools,
        ctx=ctx,
        on_event=sink,
        snapshot=snapshot,
        state=state,
    )
    async def grounded_run() -> Ending:
        if ground:  # a question naming files: they come read, as verified context
            grounding = await answer_grounding(session, root, models[0], state.intent)
            if grounding is not None:
                session.messages.append(grounding)
        return await loop.run()

    try:
        ending = await until_ending(grounded_run, session)
    finally:
        _end_task_processes(session.task_id, sink)
    ending = await mark_unread(ending, session, root)
    outcome = await measured_outcome(session, ending, loop.snapshot, root.root)
    if loop.state is not None and loop.state.providers.ledger:
        outcome = outcome.model_copy(update={"providers": dict(loop.state.providers.ledger)})
    if kernel is not None:  # code a Stop cut, or could not cut, is said, never hidden
        said = [STOPPED_LINE] if stopped_code(session.task_id) else []
        said += [NOT_INTERRUPTED] if still_running(session.task_id) else []
        if said:
            outcome = outcome.model_copy(update={"banner": "\n".join([outcome.banner, *said])})
    sink(TaskFinished(outcome))
    return outcome


def _end_task_processes(task_id: str, sink: EventSink) -> None:
    """The task ended: kill whatever its commands left running, and say what that was."""
    report = kill_scope(task_id)
    if report.killed or report.survived:
        sink(Notice(f"Background processes the task's commands left running: {report.describe()}"))


def tool_context(root: Workspace, config: MercuryConfig, sink: EventSink,
                 ask_user: AskHandler | None, *, task_id: str,
                 subagents: SubagentRunner | None,
                 kernel: KernelAccess | None = None,
                 permissions: Permissions | None = None,
                 live_edits: LiveEdits | None = None) -> ToolContext:
    """The typed context every tool call of this task gets: a notice callback, the ask_user
    handler, and the injected runner delegate_task starts sub-agents with."""
    return ToolContext(
        root=root, config=config, notice=lambda text: sink(Notice(str(text))),
        ask_handler=ask_user, subagents=subagents, process_scope=task_id, kernel=kernel,
        permissions=permissions or Permissions(), live_edits=live_edits,
    )


def resolve_chain(config: MercuryConfig) -> list[ChatModel]:
    """The configured model chain, resolved (raises ``LookupError`` / ``ValueError``)."""
    from mercury_nb.transport.factory import resolve_model

    return [resolve_model(name, config) for name in config.model_chain]
