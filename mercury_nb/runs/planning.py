"""What a front end starts: a new task, a resumed one, or a refusal that starts nothing.

* A new task whose text (in the same workspace) belongs to a paused task is refused with
  :data:`~mercury_nb.ledger.texts.PAUSED_DUPLICATE`: it resumes with "continue" instead.
* "continue" picks the given task, or the workspace's latest paused one, claimed in the
  ledger first (two processes never run it twice), and resumes it from its checkpoint under
  its settings, with the current API key and any explicit flags on top.
* A task that may change files (any but a ``--chat`` question) is refused while another live
  task runs in its workspace (:mod:`~mercury_nb.contract.shared_workspace`), naming it.
"""

from __future__ import annotations

import re
import sqlite3
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, assert_never

from mercury_nb.agent.events import EventSink
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.outcome import TaskOutcome
from mercury_nb.contract.recovery.continuing import (
    RunSettings,
    current_fixes,
    may_continue,
    recorded_cause,
)
from mercury_nb.ledger.access import LedgerHandle
from mercury_nb.ledger.occupancy import Busy, NotClaimed, Occupied
from mercury_nb.ledger.recorder import TaskRecorder, stored_task, task_header
from mercury_nb.ledger.records import TaskHeader, TaskRecord
from mercury_nb.ledger.texts import (
    ALREADY_CLAIMED,
    CANNOT_CONTINUE,
    MISSING_WORKSPACE,
    NO_LEDGER,
    NOT_RESUMABLE,
    NOTHING_TO_CONTINUE,
    OUTSIDE_ROOT,
    PAUSED_DUPLICATE,
)
from mercury_nb.runs import unfinished
from mercury_nb.runs.lookup import Refusal, find_task
from mercury_nb.runs.settings import continue_flags, plan

if TYPE_CHECKING:
    from mercury_nb.agent.checkpoint import Restorable
    from mercury_nb.agent.subagent import SubagentFactory
    from mercury_nb.tools.approval import Permissions
    from mercury_nb.tools.ask_user import AskHandler
    from mercury_nb.tools.base import LiveEdits
    from mercury_nb.tools.kernel_access import KernelAccess
    from mercury_nb.tools.registry import ToolRegistry
    from mercury_nb.transport.protocol import ChatModel

RESUMABLE: tuple[str, ...] = ("paused", "failed", "aborted")
"""Statuses ``continue ID`` accepts; plain ``continue`` takes the latest paused task."""

_CONTINUE = re.compile(
    r"^\s*(?:continue|resume)[.!]?(?:\s+(?P<id>[0-9a-f]{6,}(?:\.\d+)*))?\s*$", re.IGNORECASE
)
_CONTINUE_SAYING = re.compile(
    r"^\s*(?:continue|resume)(?:\s+(?P<id>[0-9a-f]{6,}(?:\.\d+)*))?\s*[,:;—–]\s*(?P<words>\S.*)$",
    re.IGNORECASE | re.DOTALL,
)
"""``continue, but use pytest`` (or ``continue ID: …``): a continue with the user's words."""


def continue_request(text: str) -> tuple[bool, str | None]:
    """Whether a cell body asks to continue (``continue`` or ``continue ID``, where ID is a
    task id or a prefix of at least 6 of its characters, optionally followed by a comma,
    colon or dash and more words: :func:`continue_words`), and the id."""
    match = _CONTINUE.match(text) or _CONTINUE_SAYING.match(text)
    if match is None:
        return False, None
    found = match.group("id")
    return True, found.lower() if found else None


def continue_words(text: str) -> str | None:
    """What a continue request says beyond "continue [ID]" (None: the bare word)."""
    match = _CONTINUE_SAYING.match(text)
    return match.group("words").strip() if match is not None else None


def ledger_workspace(config: MercuryConfig) -> str:
    """The workspace as the ledger stores it: the resolved workdir."""
    return str(Path(config.workdir).resolve())


@dataclass(frozen=True)
class PlannedRun:
    """A task ready to start (``checkpoint`` None: from its text)."""
    task_id: str
    task: str
    config: MercuryConfig
    handle: LedgerHandle | None
    checkpoint: Restorable | None = None
    resumed: bool = False
    blocker: str | None = None  # a resumed task: the blocker line of its pausing ending
    words: str | None = None  # a resumed task: what the user said beyond "continue"
    settings_changed: bool = False  # a resumed task paused by settings this continue changed
    header: TaskHeader | None = None
    """A new task's row identity as :func:`occupy` wrote it (redacted once, for both)."""
    shown_task: str | None = None
    """The task's text as shown and stored (masked once: the paused lookup, the row and the
    outcome take it; a continue's is its row's). None without a ledger."""

    async def run(
        self,
        on_event: EventSink,
        *,
        ask_user: AskHandler | None = None,
        registry: ToolRegistry | None = None,
        model: ChatModel | None = None,
        subagents: SubagentFactory | None = None, kernel: KernelAccess | None = None,
        permissions: Permissions | None = None, live_edits: LiveEdits | None = None,
    ) -> TaskOutcome:
        """Run it, the ledger recording around ``on_event`` (``subagents``: through the door)."""
        recorder = None
        sink = on_event
        config = self.config  # a model override is in it already (the door's)
        if self.handle is not None:
            recorder = TaskRecorder(self.handle.writer, self.task_id, self.task, config,
                                    resumed=self.resumed, header=self.header)
            sink = recorder.wrap(on_event)
            unfinished.track(self.task_id, recorder)  # a shutdown can still record its end
        try:
            if self.checkpoint is not None:
                from mercury_nb.agent.resume import resume_task

                return await resume_task(
                    self.checkpoint, config, on_event=sink, ask_user=ask_user, registry=registry,
                    model=model, subagents=subagents, words=self.words, kernel=kernel,
                    blocker=self.blocker, permissions=permissions, live_edits=live_edits,
                    settings_changed=self.settings_changed, shown_task=self.shown_task)
            from mercury_nb.agent.task import run_new_session

            return await run_new_session(
                self.task, config, on_event=sink, task_id=self.task_id, ask_user=ask_user,
                registry=registry, model=model, subagents=subagents, kernel=kernel,
                permissions=permissions, live_edits=live_edits, shown_task=self.shown_task)
        except BaseException as error:
            if recorder is not None:
                recorder.abandon(error)
            raise
        finally:
            if recorder is not None:
                unfinished.untrack(self.task_id, recorder)


def plan_task(handle: LedgerHandle | None, task: str, config: MercuryConfig,
              task_id: str | None = None) -> PlannedRun | Refusal:
    """A new task, unless its text (stripped by the request) is paused in its workspace."""
    shown = None
    if handle is not None:
        shown = stored_task(task, config)
        try:
            handle.flush()
            paused = handle.ledger.paused_with_text(shown, ledger_workspace(config))
        except sqlite3.Error:
            paused = None  # an unreadable ledger never stops a task
        if paused is not None:
            return Refusal(f"{PAUSED_DUPLICATE}\n(task {paused.id})", paused, paused=True,
                           kind="paused-duplicate")
    return PlannedRun(task_id or uuid.uuid4().hex[:12], task, config, handle, shown_task=shown)


def occupy(planned: PlannedRun) -> PlannedRun | Refusal:
    """A new recorded task takes its workspace: refused (``workspace-busy``) while a live
    task that may change the same files runs there, else its row is written ``running`` in
    the same ledger transaction (:meth:`~mercury_nb.ledger.occupancy.LedgerOccupancy.
    occupy`), so of two racing starts, in any processes, one is refused. The last check of
    a new task: a refusal after it would leave the row behind."""
    if planned.handle is None or planned.resumed:
        return planned
    header = task_header(planned.task_id, planned.task, planned.config,
                         shown=planned.shown_task)
    return (_occupied(planned.handle, header, planned.config, None)
            or replace(planned, header=header))


def _occupied(handle: LedgerHandle, header: TaskHeader, config: MercuryConfig,
              claim_from: tuple[str, ...] | None) -> Refusal | None:
    """Why the task may not take its workspace (None: it now holds it; an unreadable ledger
    never stops a task)."""
    try:
        handle.flush()  # this process's own queued writes (a task that just ended) first
        taken = handle.ledger.occupy(header, config.mode, claim_from=claim_from)
        match taken:
            case Occupied():
                return None
            case NotClaimed():
                return Refusal(ALREADY_CLAIMED.format(task_id=header.id),
                               handle.ledger.get(header.id), kind="already-claimed")
            case Busy(decision=decision):
                return Refusal(decision.message, handle.ledger.get(decision.running.task_id),
                               kind="workspace-busy")
            case _:
                assert_never(taken)
    except sqlite3.Error:
        return None


def plan_continue(
    handle: LedgerHandle | None,
    task_id: str | None,
    config: MercuryConfig,
    overrides: Mapping[str, Any] | None = None,
    words: str | None = None,
    within: Path | None = None,
    check: Callable[[MercuryConfig], Refusal | None] | None = None,
) -> PlannedRun | Refusal:
    """Resume ``task_id`` (an id or a unique prefix), or the workspace's latest paused task;
    ``words`` (what the user said beyond "continue") go to the model after the resume turn.

    ``config`` is the current one (workspace for the default pick, API key, home);
    ``within``: the folder the task's workspace must lie in (the panel's server root).
    ``overrides`` are the front end's flags; those a continue applies
    (:func:`~mercury_nb.runs.settings.continue_flags`) lay over the checkpoint's settings.
    ``check`` may refuse the settings it resumes under (before the claim: the sandbox)."""
    if handle is None:
        return Refusal(NO_LEDGER, kind="no-ledger")
    ledger = handle.ledger
    handle.flush()
    ledger.recover_interrupted()
    record: TaskRecord | None
    if task_id:
        found = find_task(ledger, task_id)
        if isinstance(found, Refusal):
            return found
        record = found
        if record.status not in RESUMABLE:
            return Refusal(CANNOT_CONTINUE.format(task_id=record.id, status=record.status),
                           record, kind="cannot-continue")
    else:
        record = ledger.latest_paused(ledger_workspace(config))
        if record is None:
            return Refusal(NOTHING_TO_CONTINUE.format(workspace=ledger_workspace(config)),
                           kind="nothing-to-continue")
    if within is not None and not inside(Path(record.workspace), within):
        return Refusal(OUTSIDE_ROOT.format(workspace=record.workspace), record,
                       kind="outside-root", value=record.workspace)
    if not Path(record.workspace).is_dir():
        return Refusal(MISSING_WORKSPACE.format(task_id=record.id, workspace=record.workspace),
                       record, kind="missing-workspace")
    from mercury_nb.agent.checkpoint import restorable

    checkpoint = restorable(ledger.checkpoint(record.id))
    stored = checkpoint.data if checkpoint is not None else None
    try:
        ran = resume_config(record, stored, config, {})
        cures, before = recorded_cause(record.cause, RunSettings.of(ran))
        # a cure without a continue flag (MERCURY_TOOL_SET, MERCURY_CONTEXT_WINDOW) comes
        # from the current settings when they differ from those the task ended under
        fixes = {} if record.resumable else current_fixes(cures, before, RunSettings.of(config))
        resumed = resume_config(record, stored, config,
                                {**fixes, **continue_flags(overrides or {})})
    except ValueError as error:  # pydantic's ValidationError is a ValueError
        return Refusal(f"Task {record.id} cannot resume with these settings: {error}", record,
                       kind="bad-settings")
    if not may_continue(record.resumable, cures, before, RunSettings.of(resumed)):
        reason = (record.banner or record.status).splitlines()[0].rstrip(".")
        return Refusal(NOT_RESUMABLE.format(task_id=record.id, reason=reason), record,
                       kind="cannot-continue")
    header = TaskHeader(record.id, record.task, record.workspace, record.models, record.parent)
    refused = (check and check(resumed)) or _occupied(handle, header, resumed, RESUMABLE)
    if refused is not None:
        return refused
    return PlannedRun(record.id, record.task, resumed, handle, checkpoint, resumed=True,
                      blocker=record.blocker, words=words, settings_changed=not record.resumable,
                      shown_task=record.task)


def inside(workspace: Path, root: Path) -> bool:
    """Whether ``workspace`` (links resolved) is ``root`` or lies under it."""
    target, base = workspace.resolve(), root.resolve()
    return target == base or base in target.parents


def resume_config(record: TaskRecord, checkpoint: Mapping[str, Any] | None,
                  current: MercuryConfig, overrides: Mapping[str, Any]) -> MercuryConfig:
    """The settings a task resumes under: its checkpoint's (or, without one, the current
    settings in its workspace with its model chain), then the current API key and home,
    then ``overrides`` (all decided by :func:`~mercury_nb.runs.settings.plan`)."""
    if checkpoint is not None:
        return plan(overrides, checkpoint=checkpoint, current=current)
    values: dict[str, Any] = {**current.model_dump(exclude={"api_key"}),
                              "workdir": Path(record.workspace)}
    if record.models:
        values.update(model=record.models[0], fallbacks=list(record.models[1:]))
    return plan(overrides, checkpoint={"config": values}, current=current)

