"""The ledger's records: a task's identifying header, a task row, an event line."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from mercury_nb.contract.task_status import TaskStatus

if TYPE_CHECKING:  # the ledger's store stays light to import (no event classes, no pydantic)
    from mercury_nb.agent.events import AgentEventKind

LedgerKind = Literal["resume", "stop-requested", "recovery"]
"""The events the ledger writes itself: a resumed task's start, a stop asked for from another
process, and ``recovery`` (a task left running by a dead process)."""

RESUMED: LedgerKind = "resume"
STOP_REQUESTED: LedgerKind = "stop-requested"
RECOVERED: LedgerKind = "recovery"

RecordedKind: TypeAlias = "AgentEventKind | LedgerKind"
"""Every kind an event row can have: an event class's own, or the ledger's."""


@dataclass(frozen=True)
class TaskHeader:
    """What identifies a task's row; every write carries it, so a row lost to a recovered
    file is recreated by the task's next write."""

    id: str
    task: str
    workspace: str
    models: tuple[str, ...]
    parent: str | None = None
    """The task that delegated this one (a sub-agent), else None."""


@dataclass(frozen=True)
class TaskRecord:
    """One task as the ledger knows it."""

    id: str
    task: str
    workspace: str
    models: tuple[str, ...]
    status: TaskStatus
    verdict: str | None
    banner: str | None
    blocker: str | None
    changes: list[dict[str, Any]]
    evidence: list[dict[str, Any]]
    steps: int
    created_at: float
    updated_at: float
    owner_pid: int | None
    owner_token: str | None
    has_checkpoint: bool
    usage: dict[str, dict[str, int]] = field(default_factory=dict)
    """Tokens per model, as ``TaskOutcome.usage`` gave them (empty: none reported)."""
    answer: str | None = None
    """The delivered answer (redacted), once the task finished with one."""
    providers: dict[str, str] = field(default_factory=dict)
    """The per-provider ledger: each provider that failed and its first error (redacted)."""
    parent: str | None = None
    """The task whose delegate_task started this one (a sub-agent), else None."""
    resumable: bool = True
    """Whether a "continue" can succeed (``TaskOutcome.resumable``; True while unfinished)."""
    cause: dict[str, Any] = field(default_factory=dict)
    """The settings whose change lets a continue cure a non-resumable ending, with the
    values it ended under (``TaskOutcome.cause``)."""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["models"] = list(self.models)
        data.pop("owner_token")
        return data

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> TaskRecord:
        (id_, task, workspace, models, status, verdict, banner, blocker, changes, evidence,
         steps, created, updated, pid, token, has_checkpoint, usage_json, answer,
         providers_json, parent, resumable, cause) = row
        usage = json.loads(usage_json) if usage_json else {}
        providers = json.loads(providers_json) if providers_json else {}
        return cls(
            id=id_, task=task, workspace=workspace, models=tuple(json.loads(models)),
            status=status, verdict=verdict, banner=banner, blocker=blocker,
            changes=json.loads(changes), evidence=json.loads(evidence), steps=int(steps),
            created_at=float(created), updated_at=float(updated), owner_pid=pid,
            owner_token=token, has_checkpoint=bool(has_checkpoint), usage=usage,
            answer=answer, providers=providers, parent=parent, resumable=bool(resumable),
            cause=json.loads(cause) if cause else {},
        )


@dataclass(frozen=True)
class EventRecord:
    """One line of a task's event log."""

    at: float
    kind: str
    verdict: str | None
    decision: str | None
    text: str | None
    id: int = 0
    task_id: str = ""
    data: str | None = None
    """The event's fields as a JSON object (its class's fields; see :mod:`mercury_nb.runs.
    events`)."""

    def to_json(self) -> dict[str, Any]:
        return {"at": self.at, "kind": self.kind, "verdict": self.verdict,
                "decision": self.decision, "text": self.text}


class AmbiguousTaskId(LookupError):
    """A task id prefix that matches more than one task."""

    def __init__(self, prefix: str, matches: Sequence[str]) -> None:
        super().__init__(f"{prefix!r} matches several tasks: {', '.join(matches)}")
        self.matches = tuple(matches)


PARTS = ("messages", "tool_log")
"""The checkpoint's growing lists, stored a row per item."""
STORED_VERSION = "stored_version"
"""The head keeps the checkpoint's ``version`` under this name: a reader that does not put
the rows back finds no version it knows, and starts the task again from its text."""


@dataclass(frozen=True)
class PartRows:
    """One list's rows to write: those from ``keep`` on are replaced by ``bodies``."""

    part: str
    keep: int
    bodies: tuple[str, ...]


@dataclass(frozen=True)
class CheckpointRows:
    """One checkpoint as the ledger writes it: its head (JSON) and each list's new rows."""

    head: str
    parts: tuple[PartRows, ...]
    items: dict[str, list[Any]] = field(repr=False, compare=False)
    """Each list's items as these rows leave them (the state once written)."""


@dataclass(frozen=True)
class StepCheckpoint:
    """A task's latest checkpoint (JSON without the start snapshot), its start snapshot
    (JSON; None keeps the stored one) and its step count."""

    data: str | CheckpointRows
    """Its rows (what changed since the last one written), or one JSON text (whole)."""
    snapshot: str | None
    steps: int
