"""The one door into a run: :meth:`Runner.submit` takes a request and answers a Run or a Refusal.

Every front end (the ``%%mercury`` cell, the CLI's ``run`` / ``continue``, the panel's
server POSTs, delegate_task, ``mercury_nb.run_task``) builds a
:class:`~mercury_nb.runs.request.RunRequest` and calls :data:`submit`. It resolves the request
once (:func:`~mercury_nb.runs.resolve.resolve`) and schedules the planned run as the one
:class:`~mercury_nb.runs.registry.Run` wrapping its ``asyncio.Task``; it is the only code in
the product that reaches the loop's entry points (enforced by import-linter).
"""

from __future__ import annotations

import asyncio
import gc
import os
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from mercury_nb.agent.events import EventSink
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.outcome import TaskOutcome
from mercury_nb.contract.recovery.subagent_supervisor import SubagentRun
from mercury_nb.runs import settings
from mercury_nb.runs.delegation import delegation
from mercury_nb.runs.launch import Report, launch, started
from mercury_nb.runs.lookup import Refusal
from mercury_nb.runs.permissions import permissions_for
from mercury_nb.runs.planning import PlannedRun
from mercury_nb.runs.registry import Run
from mercury_nb.runs.request import RunRequest, SubagentRequest
from mercury_nb.runs.resolve import ResolvedRun, resolve
from mercury_nb.transport.openai_model import load_http_client

if TYPE_CHECKING:
    from mercury_nb.tools.approval import Permissions
    from mercury_nb.tools.ask_user import AskHandler
    from mercury_nb.tools.base import LiveEdits
    from mercury_nb.tools.registry import ToolRegistry
    from mercury_nb.transport.protocol import ChatModel


class Runner:
    """Resolves requests and schedules their runs (one per process: :data:`runner`)."""

    @overload
    def submit(self, request: RunRequest, *, loop: asyncio.AbstractEventLoop | None = None,
               resolved: ResolvedRun | Refusal | None = None,
               permissions: Permissions | None = None,
               live_edits: LiveEdits | None = None) -> Run[TaskOutcome] | Refusal: ...

    @overload
    def submit(self, request: SubagentRequest, *,
               loop: asyncio.AbstractEventLoop | None = None) -> Run[SubagentRun] | Refusal: ...

    def submit(self, request: RunRequest | SubagentRequest, *,
               loop: asyncio.AbstractEventLoop | None = None,
               resolved: ResolvedRun | Refusal | None = None,
               permissions: Permissions | None = None,
               live_edits: LiveEdits | None = None,
               ) -> Run[TaskOutcome] | Run[SubagentRun] | Refusal:
        """Resolve ``request`` (unless ``resolved`` is what :func:`resolve` made of it
        already); when it passes, schedule its run on ``loop`` (default: the running loop)
        and return at once. ``permissions``: what :func:`_prepare` read for ``resolved``
        (the saved rules) and ``live_edits`` (the task's live-edit route), so nothing here
        reads the ledger. The route travels in the task's tool context, never process-wide:
        two tasks of one process with different ledgers each keep their own."""
        if isinstance(request, SubagentRequest):
            return self._delegate(request, loop)
        planned = resolve(request) if resolved is None else resolved
        if isinstance(planned, Refusal):
            return planned
        if permissions is None:
            live_edits = live_route(planned.config.home)
            permissions = permissions_for(planned, request.approver, request.approver_in)
        try:
            sink, ask = request.sink, request.ask
            if request.view_for is not None:
                sink, ask = request.view_for(planned.config)
            return launch(planned, sink=sink, ask=ask, loop=loop,
                          registry=request.registry, model=request.model,
                          subagents=delegation(planned.handle, self.submit),
                          kernel=request.kernel,
                          permissions=permissions, live_edits=live_edits)
        except BaseException:
            if planned.handle is not None and not planned.resumed:
                planned.handle.ledger.release(planned.task_id)  # it never started
            raise

    @staticmethod
    def _delegate(request: SubagentRequest, loop: asyncio.AbstractEventLoop | None
                  ) -> Run[SubagentRun] | Refusal:
        """A sub-agent: it runs in its parent's settings and workspace (nothing to resolve
        but its text) and is recorded as the parent's child, never as a workspace's task."""
        if not request.task:
            return Refusal("the task is empty", kind="empty-task")
        from mercury_nb.runs.delegated import run_delegated

        target = loop if loop is not None else asyncio.get_running_loop()
        task = target.create_task(run_delegated(request), name=f"mercury:{request.sub_id}")
        return started(task, PlannedRun(request.sub_id, request.task,
                                        request.ctx.config, request.handle))

    async def run(self, request: RunRequest) -> TaskOutcome | Refusal:
        """Submit ``request`` on the running loop and await its outcome (Stop, cancelling
        the awaiting task, ends it ``aborted``)."""
        run = self.submit(request)
        if isinstance(run, Refusal):
            return run
        try:
            return await asyncio.shield(run.task)
        except asyncio.CancelledError:
            if run.task.done():
                raise
            run.stop()  # the caller was cancelled: the task ends aborted, and that is its end
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            return await run.task


runner = Runner()


def live_route(home: Path) -> LiveEdits | None:
    """Where a task's notebook tools offer their edits to JupyterLab: the ledger of the Lab
    that started this process, else the one at ``home`` (``live_home``; None: an unusable
    ledger, they edit files on disk)."""
    from mercury_nb.contract.home import live_home
    from mercury_nb.ledger.live_edits import store_for

    try:
        return store_for(live_home(os.environ, home))
    except (OSError, sqlite3.Error):
        return None


@overload
def submit(request: RunRequest, *, loop: asyncio.AbstractEventLoop | None = None
           ) -> Run[TaskOutcome] | Refusal: ...


@overload
def submit(request: SubagentRequest, *, loop: asyncio.AbstractEventLoop | None = None
           ) -> Run[SubagentRun] | Refusal: ...


def submit(request: RunRequest | SubagentRequest, *,
           loop: asyncio.AbstractEventLoop | None = None
           ) -> Run[TaskOutcome] | Run[SubagentRun] | Refusal:
    """THE entry into a run (see the module): ``runner.submit``."""
    return runner.submit(request, loop=loop)


async def start(task: str, config: MercuryConfig, *, sink: EventSink | None = None,
                ask: AskHandler | None = None, task_id: str | None = None,
                registry: ToolRegistry | None = None, model: ChatModel | None = None,
                report: Report | None = None) -> Run[TaskOutcome] | Refusal:
    """Start ``task`` under ``config`` on the running loop; returns at once."""
    return submit(RunRequest(task=task, config=config, sink=sink, ask=ask, task_id=task_id,
                             registry=registry, model=model, report=report))


async def continue_task(task_id: str | None, config: MercuryConfig, *,
                        sink: EventSink | None = None, ask: AskHandler | None = None,
                        flags: Mapping[str, Any] | None = None,
                        registry: ToolRegistry | None = None, model: ChatModel | None = None,
                        report: Report | None = None) -> Run[TaskOutcome] | Refusal:
    """Continue ``task_id`` (None: the latest paused task of ``config``'s workspace)."""
    return submit(RunRequest(resume=True, task_id=task_id, config=config, sink=sink, ask=ask,
                             flags=dict(flags or {}), registry=registry, model=model,
                             report=report, flags_over_config=False))


async def run_task(task: str, config: MercuryConfig | None = None, *,
                   model: ChatModel | None = None, on_event: EventSink | None = None,
                   task_id: str | None = None, registry: ToolRegistry | None = None,
                   ask_user: AskHandler | None = None) -> TaskOutcome:
    """Run one task in this process to an honest ending and return its outcome: the
    library's way in (``mercury_nb.run_task``). It is not recorded in the work ledger, so
    nothing is refused for its workspace; Stop (cancelling the awaiting task) ends it
    ``aborted``. Settings the door refuses (a workdir that is not a folder) raise
    ``ValueError`` with the refusal's message.

    ``model`` replaces the configured chain with that one model; ``ask_user`` answers the
    ask_user tool (without it the run is headless)."""
    outcome = await runner.run(RunRequest(
        task=task, config=config or settings.plan(), sink=on_event, task_id=task_id,
        registry=registry, ask=ask_user, model=model, recorded=False))
    if isinstance(outcome, Refusal):
        raise ValueError(outcome.message)
    return outcome


async def submit_off_loop(request: RunRequest) -> Run[TaskOutcome] | Refusal:
    """:func:`submit` for a server: resolving (its SQLite reads and writes) runs in a worker
    thread, never on the server's event loop; the run is scheduled on that loop."""
    resolved, permissions, live_edits = await asyncio.to_thread(_prepare, request)
    return runner.submit(request, resolved=resolved,  # the door: the run on this loop
                         permissions=permissions, live_edits=live_edits)


_client_loaded: list[bool] = []


def _prepare(request: RunRequest
             ) -> tuple[ResolvedRun | Refusal, Permissions | None, LiveEdits | None]:
    """Every ledger read and write a submit makes before its run starts, in the calling
    (worker) thread: the resolved run (its new row), the live-edit route, the saved rules;
    and the HTTP client's first import and TLS context, which would hold the loop. The
    collector is off during that import, and the objects alive after it (the server's
    modules and classes) are frozen out of its full passes, which otherwise walked them
    all: about 100 ms with the GIL held, in a Jupyter server."""
    resolved = resolve(request)
    if isinstance(resolved, Refusal):
        return resolved, None, None
    if not _client_loaded:
        collecting = gc.isenabled()
        gc.disable()  # no full pass during the import either (it allocates a great deal)
        try:
            load_http_client()
            gc.freeze()
        finally:
            if collecting:
                gc.enable()
        _client_loaded.append(True)
    live_edits = live_route(resolved.config.home)
    return (resolved, permissions_for(resolved, request.approver, request.approver_in),
            live_edits)

