"""Start and continue: the only code that turns a request into a running task.

:func:`prepare` / :func:`prepare_continue` plan (a new task, a resumed one, or a
:class:`~mercury_nb.runs.planning.Refusal`); :func:`launch` schedules the planned run as an
``asyncio.Task`` on a loop and registers it for stop requests from any process;
:func:`start` and :func:`continue_task` do both on the running loop and return at once;
:func:`run_task` (``mercury_nb.run_task``) runs a task here to its ending, unrecorded.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mercury_nb.agent.events import EventSink, ignore_events
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.outcome import TaskOutcome
from mercury_nb.ledger.access import LedgerHandle, startup
from mercury_nb.runs import stopping
from mercury_nb.runs.planning import PlannedRun, Refusal, plan_continue, plan_task

if TYPE_CHECKING:
    from mercury_nb.tools.ask_user import AskHandler
    from mercury_nb.tools.registry import ToolRegistry
    from mercury_nb.transport.protocol import ChatModel

Report = Callable[[str], None]


def _to_stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


@dataclass
class Run:
    """A task running as an ``asyncio.Task`` in this process."""

    task_id: str
    task: asyncio.Task[TaskOutcome]
    config: MercuryConfig

    async def outcome(self) -> TaskOutcome:
        """The task's outcome (``aborted`` when it was stopped)."""
        return await self.task

    def done(self) -> bool:
        return self.task.done()

    def stop(self) -> None:
        """Cancel it here; the same ending as a stop from elsewhere (verdict ``aborted``)."""
        self.task.cancel()


def ledger_for(config: MercuryConfig, report: Report = _to_stderr) -> LedgerHandle | None:
    """The ledger at ``config.home`` after a startup pass (its notices go to ``report``)."""
    found = startup(config.home)
    for line in found.notices:
        report(line)
    return found.handle


def prepare(task: str, config: MercuryConfig, *, task_id: str | None = None,
            report: Report = _to_stderr) -> PlannedRun | Refusal:
    """A new task, unless the same text is paused in the same workspace."""
    return plan_task(ledger_for(config, report), task, config, task_id)


def prepare_continue(task_id: str | None, config: MercuryConfig, *,
                     flags: Mapping[str, Any] | None = None,
                     report: Report = _to_stderr) -> PlannedRun | Refusal:
    """Resume ``task_id`` (or the workspace's latest paused task), claimed in the ledger;
    ``flags`` (the explicitly given ones) override the checkpoint's settings."""
    return plan_continue(ledger_for(config, report), task_id, config, flags or {})


def launch(planned: PlannedRun, *, sink: EventSink | None = None,
           ask: AskHandler | None = None, loop: asyncio.AbstractEventLoop | None = None,
           registry: ToolRegistry | None = None, model: ChatModel | None = None) -> Run:
    """Schedule ``planned`` on ``loop`` (default: the running loop) and return at once."""
    target = loop if loop is not None else asyncio.get_running_loop()
    coroutine = planned.run(sink or ignore_events, ask_user=ask, registry=registry, model=model)
    task = target.create_task(coroutine, name=f"mercury:{planned.task_id}")
    if planned.handle is not None:
        stopping.register(planned.task_id, task, planned.config.home)
    return Run(planned.task_id, task, planned.config)


async def start(task: str, config: MercuryConfig, *, sink: EventSink | None = None,
                ask: AskHandler | None = None, task_id: str | None = None,
                registry: ToolRegistry | None = None, model: ChatModel | None = None,
                report: Report = _to_stderr) -> Run | Refusal:
    """Start ``task`` under ``config`` on the running loop; returns at once."""
    planned = prepare(task, config, task_id=task_id, report=report)
    if isinstance(planned, Refusal):
        return planned
    return launch(planned, sink=sink, ask=ask, registry=registry, model=model)


async def continue_task(task_id: str | None, config: MercuryConfig, *,
                        sink: EventSink | None = None, ask: AskHandler | None = None,
                        flags: Mapping[str, Any] | None = None,
                        registry: ToolRegistry | None = None, model: ChatModel | None = None,
                        report: Report = _to_stderr) -> Run | Refusal:
    """Continue ``task_id`` (None: the latest paused task of ``config``'s workspace)."""
    planned = prepare_continue(task_id, config, flags=flags, report=report)
    if isinstance(planned, Refusal):
        return planned
    return launch(planned, sink=sink, ask=ask, registry=registry, model=model)


async def run_task(task: str, config: MercuryConfig | None = None, *,
                   model: ChatModel | None = None, on_event: EventSink | None = None,
                   task_id: str | None = None, registry: ToolRegistry | None = None,
                   ask_user: AskHandler | None = None) -> TaskOutcome:
    """Run one task in this process to an honest ending and return its outcome: the
    library's way in (``mercury_nb.run_task``). It is not recorded in the work ledger, so
    nothing is refused; Stop (cancelling the awaiting task) ends it ``aborted``.

    ``model`` replaces the configured chain with that one model; ``ask_user`` answers the
    ask_user tool (without it the run is headless)."""
    config = config or MercuryConfig.load()
    planned = PlannedRun(task_id or uuid.uuid4().hex[:12], task.strip(), config, handle=None)
    return await planned.run(on_event or ignore_events, ask_user=ask_user, registry=registry,
                             model=model)
