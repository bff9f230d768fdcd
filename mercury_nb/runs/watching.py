"""Watch from anywhere: a task's (or every task's) typed events, read from the ledger.

:func:`watch` polls ``PRAGMA data_version`` every :data:`WATCH_POLL_S` seconds and reads the
events table (by its id index, from the last id seen) only after a commit, so events any
process records appear within half a second without re-reading whole tables.
:func:`list_tasks` and :func:`task_detail` are the read side for the server;
:func:`recent_tasks` and :func:`show_task` for ``tasks`` / ``show`` in the CLI and the magic.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mercury_nb.contract.home import home_of
from mercury_nb.ledger.access import LedgerHandle, open_ledger
from mercury_nb.ledger.reader import LedgerReader, safe_close
from mercury_nb.ledger.records import EventRecord, TaskRecord
from mercury_nb.runs.events import RunEvent
from mercury_nb.runs.lookup import Refusal, find_task

WATCH_POLL_S = 0.1
"""How often a watcher asks SQLite whether anything was committed."""


async def watch(task_id: str | None = None, *, after: int = 0,
                home: Path | str | None = None,
                until_finished: bool = False) -> AsyncIterator[RunEvent]:
    """Yield the events of ``task_id`` (an id or a unique prefix; None: every task) with an
    id above ``after``, in order, as any process records them. Runs until the caller stops
    iterating, or, with ``until_finished``, after the task's ``task-finished`` event."""
    where = home if home is not None else home_of()
    if task_id is not None:  # every SQLite read off the caller's loop (a server's)
        task_id = await asyncio.to_thread(_full_id, where, task_id)
    reader = await asyncio.to_thread(LedgerReader, where)
    try:
        while True:
            if await asyncio.to_thread(reader.changed):
                while True:
                    batch = await asyncio.to_thread(reader.events_after, after, task_id)
                    for row in batch:
                        after = row.id
                        event = RunEvent.from_record(row)
                        yield event
                        if until_finished and event.kind == "task-finished":
                            return
                    if len(batch) < 500:
                        break
            await asyncio.sleep(WATCH_POLL_S)
    finally:
        safe_close(reader)


def _full_id(where: Path | str, task_id: str) -> str:
    """``task_id``'s full id when it names a task (a unique prefix does), else itself."""
    record = open_ledger(where).ledger.get(task_id)
    return record.id if record is not None else task_id


@dataclass(frozen=True)
class TaskDetail:
    """One task as every front end shows it (the panel's server, ``show`` in the CLI and the
    magic): its ledger row, its events as the ledger keeps them (all of them from
    :func:`task_detail`; the summary, without step, tool and pulse events, from
    :func:`show_task`), and the sub-agents it delegated (their rows, in the order they
    started)."""

    record: TaskRecord
    event_rows: list[EventRecord] = field(default_factory=list)
    subagents: list[TaskRecord] = field(default_factory=list)

    @property
    def events(self) -> list[RunEvent]:
        """The events, typed (what the server sends and folds into live state)."""
        return [RunEvent.from_record(row) for row in self.event_rows]

    @property
    def outcome(self) -> dict[str, Any] | None:
        """The outcome the ledger kept (None while the task runs): :func:`outcome_of`."""
        return outcome_of(self.record)

    def to_json(self) -> dict[str, Any]:
        return {"record": self.record.to_json(), "outcome": self.outcome,
                "events": [event.to_json() for event in self.events],
                "subagents": [record.to_json() for record in self.subagents]}


def list_tasks(*, workspace: str | None = None, status: str | None = None, limit: int = 50,
               offset: int = 0, home: Path | str | None = None) -> list[TaskRecord]:
    """Tasks in the ledger, the most recently updated first."""
    handle = open_ledger(home if home is not None else home_of())
    handle.flush()
    return handle.ledger.find(workspace=workspace, status=status, limit=limit, offset=offset)


def task_detail(task_id_or_prefix: str, *, home: Path | str | None = None
                ) -> TaskDetail | None:
    """The task with this id (or unique prefix), or None. Raises ``AmbiguousTaskId``."""
    handle = open_ledger(home if home is not None else home_of())
    handle.flush()
    record = handle.ledger.get(task_id_or_prefix)
    if record is None:
        return None
    return TaskDetail(record, handle.ledger.events(record.id, progress=True),
                      handle.ledger.children(record.id))


def outcome_of(record: TaskRecord) -> dict[str, Any] | None:
    """The outcome the ledger kept for a task that is not running (``TaskOutcome`` fields)."""
    if record.status == "running":
        return None
    return {
        "task_id": record.id, "status": record.status, "verdict": record.verdict,
        "banner": record.banner, "blocker": record.blocker, "changes": record.changes,
        "evidence": record.evidence, "steps": record.steps, "models": list(record.models),
        "answer": record.answer, "providers": dict(record.providers), "usage": record.usage,
        "resumable": record.resumable,
    }


def recent_tasks(handle: LedgerHandle, limit: int | None = None) -> list[TaskRecord]:
    """The most recently updated tasks of ``handle``'s ledger (``tasks`` in the CLI and the
    magic, which opened it with a startup pass)."""
    return handle.ledger.list_tasks(limit)


def show_task(handle: LedgerHandle, task_id_or_prefix: str) -> TaskDetail | Refusal:
    """The task with this id (or unique prefix), with its summary events, or a
    ``unknown-task`` refusal saying that no task, or more than one, matches."""
    record = find_task(handle.ledger, task_id_or_prefix)
    if isinstance(record, Refusal):
        return record
    return TaskDetail(record, handle.ledger.events(record.id), handle.ledger.children(record.id))
