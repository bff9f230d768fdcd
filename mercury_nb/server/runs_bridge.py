"""Stand-in for the runs layer (RUNS_API.md) until ``mercury_nb.runs`` lands on main.

Same names and shapes as the agreed contract (plan, start, continue_task, request_stop,
watch, list_tasks, task_detail), built on the existing ledger (``ledger/runs.py``) and the
agent loop. Limits, said plainly: a stop reaches only tasks this server process runs, and
``watch`` sees what the ledger records (task start/turn/notice/finish), not step or tool
events of other processes. Once ``mercury_nb.runs`` exists, :mod:`mercury_nb.server.backend`
uses it instead and this module goes away.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from mercury_nb.agent.events import AgentEvent, Pulse, StepStarted, ToolFinished, ToolStarted
from mercury_nb.agent.outcome import TaskOutcome
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.ledger import runs as ledger_runs
from mercury_nb.ledger.access import default_home, open_ledger
from mercury_nb.ledger.files import ledger_path
from mercury_nb.ledger.records import AmbiguousTaskId, TaskRecord

POLL_S = 0.2
_KINDS = {"started": "task-started", "resumed": "resume", "turn": "turn-ended",
          "finished": "task-finished", "recovered": "recovery"}


@dataclass(frozen=True)
class RunEvent:
    id: int
    task_id: str
    kind: str
    at: float
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Refusal:
    kind: Literal["paused-duplicate", "cannot-continue", "unknown-task"]
    message: str


@dataclass(frozen=True)
class StopReply:
    kind: Literal["requested", "not-running", "unknown"]
    task_id: str | None
    message: str


@dataclass(frozen=True)
class TaskDetail:
    record: TaskRecord
    outcome: dict[str, Any] | None
    events: list[RunEvent]


@dataclass
class Run:
    task_id: str
    task: asyncio.Task[TaskOutcome]
    live: dict[str, Any] = field(default_factory=dict)
    record: TaskRecord | None = None
    """What the ledger will hold once the loop's first event is written."""

    async def outcome(self) -> TaskOutcome:
        return await asyncio.shield(self.task)

    def done(self) -> bool:
        return self.task.done()

    def stop(self) -> None:
        self.task.cancel()


_local: dict[str, Run] = {}
_outcomes: OrderedDict[str, dict[str, Any]] = OrderedDict()
"""Outcomes of tasks this process ran (the ledger keeps no answer), newest last."""
KEEP_OUTCOMES = 200


def plan(flags: Mapping[str, Any] | None = None, *, traitlets: Mapping[str, Any] | None = None,
         env: Mapping[str, str] | None = None,
         checkpoint: Mapping[str, Any] | None = None) -> MercuryConfig:
    """flags > traitlets > env > defaults (checkpoints are applied by ``continue_task``)."""
    return MercuryConfig.load(env, base=traitlets, **dict(flags or {}))


def _live_sink(run_live: dict[str, Any]) -> Any:
    def sink(event: AgentEvent) -> None:
        match event:
            case StepStarted(step=step):
                run_live.update(step=step, tool=None, activity="thinking", at=time.time())
            case ToolStarted(name=name, summary=summary):
                run_live.update(tool=name, activity=summary, at=time.time())
            case ToolFinished():
                run_live.update(tool=None, at=time.time())
            case Pulse(text=text):
                run_live.update(pulse=text)
            case _:
                pass
    return sink


def _launch(planned: ledger_runs.PlannedRun) -> Run:
    live: dict[str, Any] = {"started": time.time(), "at": time.time()}
    task = asyncio.get_running_loop().create_task(planned.run(_live_sink(live)))
    now = time.time()
    cfg = planned.config
    record = TaskRecord(planned.task_id, planned.task, ledger_runs.workspace_of(cfg),
                        cfg.model_chain, "running", None, None, None, [], [], 0, now, now,
                        None, None, False)
    run = Run(planned.task_id, task, live, record)
    _local[planned.task_id] = run
    task.add_done_callback(lambda done: _finished(planned.task_id, done))
    return run


def _finished(task_id: str, done: asyncio.Task[TaskOutcome]) -> None:
    _local.pop(task_id, None)
    if not done.cancelled() and done.exception() is None:
        _outcomes[task_id] = done.result().model_dump(mode="json")
        while len(_outcomes) > KEEP_OUTCOMES:
            _outcomes.popitem(last=False)


async def start(task: str, cfg: MercuryConfig, *, sink: Any = None,
                ask: Any = None) -> Run | Refusal:
    planned = ledger_runs.plan_task(open_ledger(cfg.home), task, cfg)
    if isinstance(planned, ledger_runs.Refusal):
        return Refusal("paused-duplicate", planned.message)
    return _launch(planned)


async def continue_task(task_id: str | None, cfg: MercuryConfig, *, sink: Any = None,
                        ask: Any = None) -> Run | Refusal:
    given = {name: getattr(cfg, name) for name in cfg.model_fields_set
             if name not in ("workdir", "home")}  # flags and env beat the checkpoint
    planned = ledger_runs.plan_continue(open_ledger(cfg.home), task_id, cfg, given)
    if isinstance(planned, ledger_runs.Refusal):
        kind: Any = "unknown-task" if planned.record is None else "cannot-continue"
        return Refusal(kind, planned.message)
    return _launch(planned)


def request_stop(task_id_or_prefix: str) -> StopReply:
    record = _get(task_id_or_prefix)
    if record is None:
        return StopReply("unknown", None, f"No task {task_id_or_prefix}.")
    run = _local.get(record.id)
    if run is None or run.done():
        return StopReply("not-running", record.id, f"Task {record.id} is not running here.")
    run.stop()
    return StopReply("requested", record.id, f"Stop requested for task {record.id}.")


def live_state(task_id: str) -> dict[str, Any] | None:
    run = _local.get(task_id)
    return None if run is None else dict(run.live)


def _handle() -> Any:
    return open_ledger(default_home())


def _get(task_id: str) -> TaskRecord | None:
    handle = _handle()
    handle.flush()
    try:
        found = handle.ledger.get(task_id)
    except AmbiguousTaskId:
        return None
    if found is None and task_id in _local:
        return _local[task_id].record  # started, first write still queued
    return found


def list_tasks(*, workspace: str | None = None, status: str | None = None, limit: int = 50,
               offset: int = 0) -> list[TaskRecord]:
    handle = _handle()
    handle.flush()
    records = [r for r in handle.ledger.list_tasks()
               if (workspace is None or r.workspace == workspace)
               and (status is None or r.status == status)]
    return records[offset:offset + limit]


def _rows(after: int, task_id: str | None) -> list[RunEvent]:
    conn = sqlite3.connect(f"file:{ledger_path(default_home())}?mode=ro", uri=True, timeout=5)
    try:
        sql = "SELECT id, task_id, at, kind, verdict, decision, text FROM events WHERE id > ?"
        params: tuple[Any, ...] = (after,)
        if task_id is not None:
            sql += " AND task_id = ?"
            params += (task_id,)
        rows = conn.execute(sql + " ORDER BY id", params).fetchall()
    except sqlite3.Error:
        return []
    finally:
        conn.close()
    return [RunEvent(row[0], row[1], _KINDS.get(row[3], row[3]), row[2],
                     {"verdict": row[4], "decision": row[5], "text": row[6]}) for row in rows]


def task_detail(task_id_or_prefix: str) -> TaskDetail | None:
    record = _get(task_id_or_prefix)
    if record is None:
        return None
    outcome = _outcomes.get(record.id) if record.status != "running" else None
    return TaskDetail(record, outcome, _rows(0, record.id))


async def watch(task_id: str | None = None, *, after: int = 0) -> AsyncIterator[RunEvent]:
    last = after
    while True:
        for event in await asyncio.to_thread(_rows, last, task_id):
            last = event.id
            yield event
        await asyncio.sleep(POLL_S)
