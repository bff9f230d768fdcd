"""Runs: the one home for planning, starting, continuing, stopping and watching a task.

Every front end (the ``%%mercury`` magic, the CLI, the server extension) goes through this
package; it sits above the agent loop and the ledger and below the front ends::

    run = runs.submit(runs.RunRequest(task="...", flags=..., sink=...))  # THE door: Run | Refusal
    run.on_done(callback); run.summary()                  # subscribers of the one task wrapper
    run = await runs.start("task", cfg, sink=...)         # a request built for you
    run = await runs.continue_task(task_id, cfg)          # resume from the checkpoint
    reply = runs.request_stop(task_id)                    # from any process
    report = runs.undo(task_id, cfg)                      # take back its file changes
    async for event in runs.watch(task_id, after=0): ...  # typed events, any process
    live = runs.fold_live(live, event)                    # what it is doing now
    runs.list_tasks(); runs.task_detail(task_id)
    outcome = await runs.run_task("task", cfg)           # here, to its ending, unrecorded

A task's delegate_task starts its sub-agents here as well (:mod:`~mercury_nb.runs.delegation`).
"""

from mercury_nb.runs.events import EventKind, RunEvent
from mercury_nb.runs.launch import (
    launch,
    ledger_for,
)
from mercury_nb.runs.live_state import LiveState, fold_live, live_of
from mercury_nb.runs.lookup import Refusal, RefusalKind
from mercury_nb.runs.planning import PlannedRun, continue_request
from mercury_nb.runs.registry import Run, RunSummary
from mercury_nb.runs.request import RunRequest
from mercury_nb.runs.resolve import ResolvedRun, resolve
from mercury_nb.runs.runner import (
    Runner,
    continue_task,
    run_task,
    runner,
    start,
    submit,
    submit_off_loop,
)
from mercury_nb.runs.settings import plan
from mercury_nb.runs.stopping import StopReply, request_stop
from mercury_nb.runs.undoing import UndoReport, undo
from mercury_nb.runs.watching import (
    TaskDetail,
    list_tasks,
    recent_tasks,
    show_task,
    task_detail,
    watch,
)

__all__ = [
    "EventKind",
    "LiveState",
    "PlannedRun",
    "Refusal",
    "RefusalKind",
    "ResolvedRun",
    "Run",
    "RunEvent",
    "RunRequest",
    "RunSummary",
    "Runner",
    "StopReply",
    "TaskDetail",
    "UndoReport",
    "continue_request",
    "continue_task",
    "fold_live",
    "launch",
    "ledger_for",
    "list_tasks",
    "live_of",
    "plan",
    "recent_tasks",
    "request_stop",
    "resolve",
    "run_task",
    "runner",
    "show_task",
    "start",
    "submit",
    "submit_off_loop",
    "task_detail",
    "undo",
    "watch",
]
