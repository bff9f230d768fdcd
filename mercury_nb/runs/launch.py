"""Start and continue: the only code that turns a request into a running task.

:func:`prepare` / :func:`prepare_continue` plan (a new task, a resumed one, or a
:class:`~mercury_nb.runs.planning.Refusal`); :func:`launch` schedules the planned run as an
``asyncio.Task`` on a loop and registers it for stop requests from any process;
front ends reach both through :data:`~mercury_nb.runs.runner.submit`, the one door.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
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


@dataclass(frozen=True)
class RunSummary:
    """What a subscriber shows of a run before the ledger has its row."""

    task_id: str
    text: str
    workspace: str
    models: tuple[str, ...]
    done: bool


@dataclass
class Run:
    """A task running as an ``asyncio.Task`` in this process: the only wrapper of that task.
    It owns the id, the stop registration (:mod:`~mercury_nb.runs.stopping`) and the recorder
    (:meth:`~mercury_nb.runs.planning.PlannedRun.run`); front ends subscribe to it."""

    task_id: str
    task: asyncio.Task[TaskOutcome]
    config: MercuryConfig
    text: str = ""
    handle: LedgerHandle | None = None
    """The ledger its recorder writes to (None: unrecorded)."""

    def on_done(self, callback: Callable[[Run], object]) -> None:
        """Call ``callback(run)`` once the task is done (at once when it already is)."""
        self.task.add_done_callback(lambda _: callback(self))

    def summary(self) -> RunSummary:
        return RunSummary(self.task_id, self.text, str(Path(self.config.workdir).resolve()),
                          self.config.model_chain, self.task.done())

    async def outcome(self) -> TaskOutcome:
        """The task's outcome (``aborted`` when it was stopped)."""
        return await self.task

    def done(self) -> bool:
        return self.task.done()

    def stop(self) -> None:
        """Cancel it here; the same ending as a stop from elsewhere (verdict ``aborted``)."""
        self.task.cancel()


def ledger_for(config: MercuryConfig, report: Report = _to_stderr, *,
               prune: bool = False) -> LedgerHandle | None:
    """The ledger at ``config.home`` after a startup pass (its notices go to ``report``;
    ``prune``: finished tasks past ``ledger_keep_finished`` / ``ledger_keep_days`` go)."""
    found = (startup(config.home, keep_finished=config.ledger_keep_finished,
                     keep_days=config.ledger_keep_days) if prune else startup(config.home))
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
    return Run(planned.task_id, task, planned.config, planned.task, planned.handle)
