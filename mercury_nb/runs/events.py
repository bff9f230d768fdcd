"""The typed events of a run as watchers see them: a kind of the one vocabulary, its fields."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, get_args

from mercury_nb.agent.events import AGENT_EVENT_KINDS
from mercury_nb.ledger.records import EventRecord, LedgerKind, RecordedKind

__all__ = ["EVENT_KINDS", "EventKind", "RunEvent", "kind_of"]

EventKind = RecordedKind
"""The kind of a run's event as watchers see it: an event class's own, or the ledger's."""

EVENT_KINDS: frozenset[EventKind] = AGENT_EVENT_KINDS | frozenset(get_args(LedgerKind))


def kind_of(stored: str) -> EventKind:
    """The event kind of a stored ``kind`` column (a kind this version does not know, from a
    later mercury-nb, reads as ``notice``)."""
    for kind in EVENT_KINDS:
        if kind == stored:
            return kind
    return "notice"


@dataclass(frozen=True)
class RunEvent:
    """One event of a run, as recorded in the ledger by whichever process ran it.

    ``data`` holds the fields of the event's class as recorded (see
    :mod:`mercury_nb.agent.events`; ``text`` is a display line for humans that no consumer
    needs to parse), plus the ledger's own: ``models`` for ``task-started`` / ``resume``,
    ``verdict`` and ``decision`` for ``turn-ended``, ``status``, ``verdict`` and ``blocker``
    for ``task-finished``."""

    id: int
    """The ledger's event id: increasing, so ``watch(after=id)`` resumes after it."""
    task_id: str
    kind: EventKind
    at: float
    """When it was recorded (epoch seconds)."""
    data: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_record(cls, record: EventRecord) -> RunEvent:
        data: dict[str, Any] = {}
        if record.data:
            try:
                loaded = json.loads(record.data)
            except ValueError:
                loaded = None
            if isinstance(loaded, dict):
                data.update(loaded)
        return cls(record.id, record.task_id, kind_of(record.kind), record.at, data)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "task_id": self.task_id, "kind": self.kind, "at": self.at,
                "data": self.data}
