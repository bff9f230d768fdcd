"""The one door from the server into tasks: the runs layer, and turning its records into JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mercury_nb.server import runs_bridge as runs
from mercury_nb.server.models import TaskDetailOut, TaskSummary
from mercury_nb.server.pricing import estimate_all

__all__ = ["detail_json", "resolve_workdir", "runs", "summary"]


class WorkdirError(ValueError):
    """A workdir that is not a folder inside the server root."""


def resolve_workdir(root: Path, requested: str) -> Path:
    """``requested`` (relative to ``root``, or absolute) as a resolved folder inside ``root``."""
    base = root.resolve()
    target = (base / requested).resolve() if requested else base
    if target != base and base not in target.parents:
        raise WorkdirError(f"workdir {requested!r} is outside the server root")
    if not target.is_dir():
        raise WorkdirError(f"workdir {requested!r} is not a folder")
    return target


def summary(record: Any) -> TaskSummary:
    """A ledger record (``TaskRecord``) as a list row, with live state when running here."""
    live = runs.live_state(record.id) if record.status == "running" else None
    return TaskSummary(
        id=record.id, task=record.task, workspace=record.workspace, status=record.status,
        verdict=record.verdict, banner=record.banner, blocker=record.blocker,
        models=list(record.models), steps=record.steps, created_at=record.created_at,
        updated_at=record.updated_at, live=live,
    )


def event_json(event: Any) -> dict[str, Any]:
    return {"id": event.id, "task_id": event.task_id, "kind": str(event.kind),
            "at": event.at, "data": dict(event.data)}


def detail_json(detail: Any) -> dict[str, Any]:
    """``runs.TaskDetail`` as the detail view's JSON: the outcome when known, else the record."""
    record = detail.record
    outcome: dict[str, Any] = detail.outcome or {}
    usage = outcome.get("usage") or {}
    if not isinstance(usage, dict):
        usage = {}
    out = TaskDetailOut(
        task=summary(record),
        answer=outcome.get("answer"),
        changes=outcome.get("changes", record.changes),
        evidence=outcome.get("evidence", record.evidence),
        providers=outcome.get("providers", {}),
        usage={str(k): dict(v) for k, v in usage.items() if isinstance(v, dict)},
        costs=estimate_all(usage),
        events=[event_json(event) for event in detail.events],
    )
    return out.model_dump(mode="json")
