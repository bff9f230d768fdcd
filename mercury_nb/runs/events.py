"""The typed events of a run as watchers see them: a closed set of kinds, each with its fields."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from mercury_nb.ledger.records import EventRecord

EventKind = Literal[
    "task-started",
    "resume",
    "step-started",
    "tool-started",
    "tool-finished",
    "notice",
    "pulse",
    "turn-ended",
    "provider-switch",
    "guard-round",
    "compaction",
    "continuation",
    "verification",
    "stall",
    "subagent",
    "recovery",
    "stop-requested",
    "task-finished",
]
"""Every kind of event a run records. Fields in ``RunEvent.data`` by kind:

* ``task-started`` / ``resume``: ``models`` (the chain);
* ``step-started``: ``step``, ``max_steps``, ``model``;
* ``tool-started``: ``step``, ``tool``, ``summary`` (short args), ``command`` (run_command);
* ``tool-finished``: ``step``, ``tool``, ``ok``, ``summary``;
* ``pulse``: ``activity``, ``silent_s``, ``command``;
* ``turn-ended``: ``verdict``, ``decision`` (``finish`` / ``next-turn`` / ``retry-step`` /
  ``guard-round``);
* ``notice`` and the notice kinds (``provider-switch`` … ``subagent``): ``text`` only;
* ``task-finished``: ``status``, ``verdict``, ``blocker``;
* ``recovery``, ``stop-requested``: none.

A display ``text`` may be present for humans; no consumer needs to parse it."""

EVENT_KINDS: frozenset[str] = frozenset(get_args(EventKind))

STORED_KINDS: dict[str, EventKind] = {
    "started": "task-started",
    "resumed": "resume",
    "turn": "turn-ended",
    "finished": "task-finished",
    "recovered": "recovery",
}
"""The ledger's older names for some kinds (rows written before typed events)."""


def kind_of(stored: str) -> EventKind:
    """The event kind of a stored ``kind`` column (unknown kinds read as ``notice``)."""
    if stored in STORED_KINDS:
        return STORED_KINDS[stored]
    if stored in EVENT_KINDS:
        return stored  # type: ignore[return-value]  # checked against the Literal just above
    return "notice"


@dataclass(frozen=True)
class RunEvent:
    """One event of a run, as recorded in the ledger by whichever process ran it."""

    id: int
    """The ledger's event id: increasing, so ``watch(after=id)`` resumes after it."""
    task_id: str
    kind: EventKind
    at: float
    """When it was recorded (epoch seconds)."""
    data: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_record(cls, record: EventRecord) -> RunEvent:
        kind = kind_of(record.kind)
        data: dict[str, Any] = {}
        if record.data:
            try:
                loaded = json.loads(record.data)
            except ValueError:
                loaded = None
            if isinstance(loaded, dict):
                data.update(loaded)
        if kind == "turn-ended":
            data.setdefault("verdict", record.verdict)
            data.setdefault("decision", record.decision)
        elif kind == "task-finished":
            data.setdefault("verdict", record.verdict)
            data.setdefault("status", record.decision)
            data.setdefault("blocker", record.text)
        elif kind in ("task-started", "resume") and record.text:
            data.setdefault("models", record.text.split(", "))
        elif record.text is not None:
            data.setdefault("text", record.text)
        return cls(record.id, record.task_id, kind, record.at, data)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "task_id": self.task_id, "kind": self.kind, "at": self.at,
                "data": self.data}
