"""Start and continue: the only code that turns a request into a running task.

:func:`launch` schedules a planned run (:func:`~mercury_nb.runs.resolve.resolve`) as an
``asyncio.Task`` on a loop, and :func:`started` makes its one Run: held by this process's
registry and, when recorded, stoppable from any process; front ends reach both through
:data:`~mercury_nb.runs.runner.submit`, the one door.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from mercury_nb.agent.events import EventSink, ignore_events
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.outcome import TaskOutcome
from mercury_nb.ledger.access import LedgerHandle, startup
from mercury_nb.runs import registry as runs_here
from mercury_nb.runs import stopping
from mercury_nb.runs.planning import PlannedRun
from mercury_nb.runs.registry import Run

if TYPE_CHECKING:
    from mercury_nb.agent.subagent import SubagentFactory
    from mercury_nb.tools.approval import Permissions
    from mercury_nb.tools.ask_user import AskHandler
    from mercury_nb.tools.base import LiveEdits
    from mercury_nb.tools.kernel_access import KernelAccess
    from mercury_nb.tools.registry import ToolRegistry
    from mercury_nb.transport.protocol import ChatModel

Report = Callable[[str], None]
ResultT = TypeVar("ResultT")


def _to_stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def ledger_for(config: MercuryConfig, report: Report = _to_stderr, *,
               prune: bool = False) -> LedgerHandle | None:
    """The ledger at ``config.home`` after a startup pass (its notices go to ``report``;
    ``prune``: finished tasks past ``ledger_keep_finished`` / ``ledger_keep_days`` go)."""
    found = (startup(config.home, keep_finished=config.ledger_keep_finished,
                     keep_days=config.ledger_keep_days) if prune else startup(config.home))
    for line in found.notices:
        report(line)
    return found.handle


def launch(planned: PlannedRun, *, sink: EventSink | None = None,
           ask: AskHandler | None = None, loop: asyncio.AbstractEventLoop | None = None,
           registry: ToolRegistry | None = None, model: ChatModel | None = None,
           subagents: SubagentFactory | None = None,
           kernel: KernelAccess | None = None,
           permissions: Permissions | None = None,
           live_edits: LiveEdits | None = None) -> Run[TaskOutcome]:
    """Schedule ``planned`` on ``loop`` (default: the running loop) and return at once."""
    target = loop if loop is not None else asyncio.get_running_loop()
    coroutine = planned.run(sink or ignore_events, ask_user=ask, registry=registry, model=model,
                            subagents=subagents, kernel=kernel, permissions=permissions,
                            live_edits=live_edits)
    return started(target.create_task(coroutine, name=f"mercury:{planned.task_id}"), planned)


def started(task: asyncio.Task[ResultT], planned: PlannedRun) -> Run[ResultT]:
    """The one Run of ``task``: in this process's registry, and (recorded) stoppable from
    any process."""
    run = Run(planned.task_id, task, planned.config, planned.task, planned.handle)
    runs_here.add(run)
    if planned.handle is not None:
        stopping.watch_for_stops(run.home)
    return run
