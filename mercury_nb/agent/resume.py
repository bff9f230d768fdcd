"""Resumes a task from a checkpoint: its conversation, counters and the original start snapshot.

The restored task keeps its id, its conversation, its step count and tool log, its
continuation and truncation counters, and the snapshot taken when it first started, so the
change summary after the resume covers the whole task. It gets a fresh step budget and runs
through the same :func:`~mercury_nb.agent.task.run_session` as a new task.

Its conversation gets the resume turn (:mod:`~mercury_nb.contract.recovery.resumption`):
the task restated, the files changed since the start (measured here, the start snapshot
against the disk), the newest check and what remains, then the user's own words when they
said more than "continue". It is a user message marked ``[SYSTEM: RESUME]``, as every
directive of the loop is (several chat templates of local servers refuse a late system
message, and providers that take one system prompt move it to the top).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mercury_nb.agent.checkpoint import (
    Restorable,
    restore_router_state,
    restore_session,
    restore_snapshot,
)
from mercury_nb.agent.events import EventSink, ignore_events
from mercury_nb.agent.evidence import check_records
from mercury_nb.agent.lifecycle import setup_failed
from mercury_nb.agent.prompts import user_message
from mercury_nb.agent.session import TaskSession
from mercury_nb.agent.task import resolve_chain, run_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.gate.task_intent import TaskIntent
from mercury_nb.contract.gate.verification import judge_evidence, touches_notebooks
from mercury_nb.contract.outcome import TaskOutcome
from mercury_nb.contract.recovery.resumption import ResumeFacts, last_check_of, resume_message
from mercury_nb.contract.turns.router_state import RouterState
from mercury_nb.contract.vocabulary import TurnVerdict
from mercury_nb.workspace.changes import ChangeReport, measure_changes

if TYPE_CHECKING:
    from mercury_nb.agent.subagent import SubagentFactory
    from mercury_nb.tools.approval import Permissions
    from mercury_nb.tools.ask_user import AskHandler
    from mercury_nb.tools.base import LiveEdits
    from mercury_nb.tools.kernel_access import KernelAccess
    from mercury_nb.tools.registry import ToolRegistry
    from mercury_nb.transport.protocol import ChatModel


def _stored_chain(checkpoint: Mapping[str, Any]) -> tuple[str, ...]:
    stored = checkpoint.get("config") or {}
    return (str(stored.get("model")), *(str(m) for m in stored.get("fallbacks") or ()))


async def resume_task(
    checkpoint: Restorable | Mapping[str, Any],
    config: MercuryConfig,
    *,
    model: ChatModel | None = None,
    on_event: EventSink | None = None,
    registry: ToolRegistry | None = None,
    ask_user: AskHandler | None = None,
    words: str | None = None,
    blocker: str | None = None,
    subagents: SubagentFactory | None = None,
    settings_changed: bool = False,
    kernel: KernelAccess | None = None,
    permissions: Permissions | None = None,
    live_edits: LiveEdits | None = None,
    shown_task: str | None = None,
) -> TaskOutcome:
    """Continue the checkpointed task under ``config`` (which carries the API key; the door
    builds it: :func:`mercury_nb.runs.planning.resume_config`) until its next honest ending.

    ``words`` are what the user said beyond "continue" (their own turn after the resume turn);
    ``blocker`` is the blocker line of the ending that paused it (the ledger keeps it);
    ``settings_changed``: that ending came from settings this continue changed
    (:func:`~mercury_nb.contract.recovery.continuing.may_continue`), so its blocker is not
    what remains. ``model`` runs it instead of the configured chain, which ``config``
    already names as it (:func:`mercury_nb.runs.resolve.with_model`); ``kernel``: the
    user's kernel (a continue from a cell).
    """
    if not isinstance(checkpoint, Restorable):  # checked by the door: its snapshot parsed
        checkpoint = Restorable(checkpoint, restore_snapshot(checkpoint))
    data = dict(checkpoint.data)
    sink = on_event or ignore_events
    session = restore_session(data, config)
    session.shown_task = shown_task
    fresh_chain = _stored_chain(data) != config.model_chain
    if fresh_chain:
        session.provider_index = 0  # provider numbers and lowered caps were for another chain
    # the stored snapshot kept "before" texts only of files changed by then: put back those
    # of files still as they were, for files this run changes first
    snapshot = await asyncio.to_thread(checkpoint.snapshot.rehydrated)
    done = await asyncio.to_thread(measure_changes, snapshot, Path(config.workdir))
    state = restore_router_state(data, session.task, config)  # the task read once, here
    facts = resume_facts(session, done, state, blocker=blocker, words=words,
                         settings_changed=settings_changed)
    session.messages.append(user_message(resume_message(facts, config)))
    if facts.user_words:
        session.messages.append(user_message(facts.user_words))
    if fresh_chain:
        state = replace(state, output_caps=(), providers=replace(state.providers, current=0))
    try:
        models = [model] if model is not None else resolve_chain(config)
    except (LookupError, ValueError) as error:
        return await setup_failed(session, snapshot, Path(config.workdir), error, sink)
    return await run_session(session, snapshot, models, sink=sink, registry=registry,
                             ask_user=ask_user, state=state, subagents=subagents,
                             kernel=kernel, permissions=permissions, live_edits=live_edits)


def resume_facts(session: TaskSession, done: ChangeReport, state: RouterState, *,
                 blocker: str | None, words: str | None,
                 settings_changed: bool = False) -> ResumeFacts:
    """What the resume turn says, from the restored session, its router state (the task's
    words as read once) and the measured changes: the newest check counts a run the task
    asked for (``python hello.py`` for "run hello.py")."""
    verdict = judge_evidence(
        check_records(session), session.last_mutation_seq, runs=state.requirements.runs,
        notebooks_changed=touches_notebooks(change.path for change in done.changes),
    )
    known = session.last_verdict if session.last_verdict in {v.value for v in TurnVerdict} \
        else None
    return ResumeFacts(
        task=session.task,
        changed=tuple(f"{change.path} ({change.kind})" for change in done.changes),
        last_check=last_check_of(verdict),
        last_verdict=TurnVerdict(known) if known is not None else None,
        blocker=blocker or None,
        user_words=(words or "").strip() or None,
        question=state.intent is TaskIntent.QUESTION,
        settings_changed=settings_changed,
    )
