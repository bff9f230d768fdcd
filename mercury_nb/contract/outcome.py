"""The public result of a task: TaskOutcome and its parts, as JSON-ready pydantic models."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Status = Literal["completed", "paused", "failed", "aborted"]


class FileChange(BaseModel):
    """One file changed during the task, measured on disk, never taken from the model."""

    model_config = ConfigDict(frozen=True)

    path: str
    added: int
    removed: int
    kind: Literal["created", "modified", "deleted"] = "modified"
    preview: str = ""


class CommandEvidence(BaseModel):
    """A command the agent ran, with its exit code and where it fell in the task."""

    model_config = ConfigDict(frozen=True)

    command: str
    exit_code: int | None
    step: int
    timed_out: bool = False
    after_last_change: bool = True


class TaskOutcome(BaseModel):
    """How a task ended. ``answer`` is only ever text from a complete stream."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    task: str
    status: Status
    verdict: str | None
    answer: str | None
    banner: str
    blocker: str | None = None
    changes: list[FileChange] = []
    evidence: list[CommandEvidence] = []
    steps: int = 0
    models: list[str] = []
    error: str | None = None
    providers: dict[str, str] = {}
    """The per-provider ledger: each provider that failed during the task and its first
    error (redacted, at most ``provider_error_chars`` chars), in chain order."""
