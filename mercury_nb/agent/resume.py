"""Resumes a task from a checkpoint: its conversation, counters and the original start snapshot.

The restored task keeps its id, its conversation (with the user's "continue" appended), its
step count and tool log, its continuation and truncation counters, and the snapshot taken
when it first started, so the change summary after the resume covers the whole task. It
gets a fresh step budget and runs through the same :func:`~mercury_nb.agent.task.run_session`
as a new task.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mercury_nb.agent.checkpoint import restore_router_state, restore_session, restore_snapshot
from mercury_nb.agent.events import EventSink, TaskFinished, ignore_events
from mercury_nb.agent.finish import build_outcome
from mercury_nb.agent.prompts import RESUMED_MESSAGE, user_message
from mercury_nb.agent.task import resolve_chain, run_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import Failed
from mercury_nb.contract.outcome import TaskOutcome
from mercury_nb.transport.factory import SETUP_FAILED
from mercury_nb.workspace.changes import measure_changes

if TYPE_CHECKING:
    from mercury_nb.agent.subagent import SubagentFactory
    from mercury_nb.tools.ask_user import AskHandler
    from mercury_nb.tools.registry import ToolRegistry
    from mercury_nb.transport.protocol import ChatModel


def _stored_chain(checkpoint: Mapping[str, Any]) -> tuple[str, ...]:
    stored = checkpoint.get("config") or {}
    return (str(stored.get("model")), *(str(m) for m in stored.get("fallbacks") or ()))


async def resume_task(
    checkpoint: Mapping[str, Any],
    config: MercuryConfig,
    *,
    model: ChatModel | None = None,
    on_event: EventSink | None = None,
    registry: ToolRegistry | None = None,
    ask_user: AskHandler | None = None,
    message: str = RESUMED_MESSAGE,
    subagents: SubagentFactory | None = None,
) -> TaskOutcome:
    """Continue the checkpointed task under ``config`` (which carries the API key; build it
    with :func:`mercury_nb.agent.checkpoint.config_of`) until its next honest ending.

    ``message`` is appended as the user's turn. ``model`` replaces the chain with one model.
    """
    data = dict(checkpoint)
    if model is not None and config.model_chain != (model.name,):
        config = config.with_changes(model=model.name, fallbacks=())
    sink = on_event or ignore_events
    session = restore_session(data, config)
    fresh_chain = _stored_chain(data) != config.model_chain
    if fresh_chain:
        session.provider_index = 0  # provider numbers and lowered caps were for another chain
    session.messages.append(user_message(message))
    # the stored snapshot kept "before" texts only of files changed by then: put back those
    # of files still as they were, for files this run changes first
    snapshot = await asyncio.to_thread(restore_snapshot(data).rehydrated)
    state = restore_router_state(data, session.task, config)
    if fresh_chain:
        state = replace(state, output_caps=(), providers=replace(state.providers, current=0))
    try:
        models = [model] if model is not None else resolve_chain(config)
    except (LookupError, ValueError) as error:
        report = await asyncio.to_thread(measure_changes, snapshot, Path(config.workdir))
        outcome = build_outcome(session, Failed(SETUP_FAILED.format(error=error)), report)
        sink(TaskFinished(outcome))
        return outcome
    return await run_session(session, snapshot, models, sink=sink, registry=registry,
                             ask_user=ask_user, state=state, subagents=subagents)
