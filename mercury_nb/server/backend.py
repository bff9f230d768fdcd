"""The one door from the server into tasks: the runs layer, and turning its records into JSON.

Tasks are started, continued, stopped and watched only through :mod:`mercury_nb.runs`. The
ledger keeps every finished task's outcome (answer, provider ledger and usage included), and
``runs.task_detail`` reads it after this process's queued writes have landed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mercury_nb import runs
from mercury_nb.contract.config_limits import STEPS_RANGE_WORDS
from mercury_nb.server.inputs import bad_text
from mercury_nb.server.models import TaskDetailOut, TaskSummary
from mercury_nb.server.pricing import estimate_all

__all__ = ["detail", "detail_json", "refusal_reply", "resolve_workdir", "runs", "settings_error",
           "summary"]


def refusal_reply(refusal: runs.Refusal) -> tuple[str, dict[str, Any]]:
    """A start's refusal as the API words it (the message, the reply's other fields): a
    missing key's bare error, with the panel's "Connect a model" form linked; else the runs
    layer's message and kind."""
    if refusal.kind == "missing-key":
        why = (refusal.value or refusal.message).rstrip(".")
        return f"{why}.", {"kind": refusal.kind, "link": "connect"}
    return refusal.message, {"kind": refusal.kind}

class WorkdirError(ValueError):
    """A list query's ``workspace`` that is not a folder inside the server root (a new
    task's workdir is the door's to check: :func:`settings_error` words its refusal)."""


def resolve_workdir(root: Path, requested: str) -> Path:
    """``requested`` (relative to ``root``, or absolute) as a resolved folder inside ``root``;
    a name no folder can have (a NUL, a lone surrogate, too long) is a :class:`WorkdirError`."""
    why = bad_text(requested)
    if why is not None:
        raise WorkdirError(f"workdir {requested!r} {why}")
    try:
        base = root.resolve()
        target = (base / requested).resolve() if requested else base
        if target != base and base not in target.parents:
            raise WorkdirError(f"workdir {requested!r} is outside the server root")
        if not target.is_dir():
            raise WorkdirError(f"workdir {requested!r} is not a folder")
    except (OSError, ValueError) as error:  # ENAMETOOLONG, a symlink loop
        if isinstance(error, WorkdirError):
            raise
        detail = getattr(error, "strerror", None) or error
        raise WorkdirError(f"workdir {requested!r} is not a folder ({detail})") from None
    return target


SETTINGS_REFUSALS = frozenset({"bad-settings", "bad-max-steps", "bad-workdir", "empty-task",
                               "outside-root"})
"""The door's refusals of a new task's own settings: a JSON 400, not a 409."""


def settings_error(refusal: runs.Refusal, workdir: str) -> str:
    """The 400's error for one of :data:`SETTINGS_REFUSALS`: the workdir in the panel's words
    (``workdir`` as the body gave it, relative to the server root)."""
    match refusal.kind:
        case "bad-workdir":
            return f"workdir {workdir!r} is not a folder"
        case "outside-root":
            return f"workdir {workdir!r} is outside the server root"
        case "bad-max-steps":
            return f"max_steps must be {STEPS_RANGE_WORDS}"
        case _:
            return f"invalid settings: {refusal.message}"


def detail(task_id: str) -> Any:
    """``runs.task_detail``: a task started here a moment ago is there already (the door
    writes its row when it takes the workspace)."""
    return runs.task_detail(task_id)


def live_state(events: list[Any]) -> dict[str, Any]:
    """Step, tool and timestamps of a running task from its events (``runs.live_of``)."""
    return runs.live_of(events).to_json()


def summary(record: Any, events: list[Any] | None = None) -> TaskSummary:
    """A ledger record (``TaskRecord``) as a list row; a running task gets its live state."""
    live = None
    steps = record.steps
    if record.status == "running":
        if events is None:
            found = runs.task_detail(record.id)
            events = found.events if found is not None else []
        live = live_state(events)
        # one count everywhere: the step it is on (the live state's) once it is ahead of the
        # last checkpoint's, so the header, the row and the status line never disagree
        if isinstance(live.get("step"), int):
            steps = max(steps, live["step"])
    return TaskSummary(
        id=record.id, task=record.task, workspace=record.workspace, status=record.status,
        verdict=record.verdict, banner=record.banner, blocker=record.blocker,
        models=list(record.models), steps=steps, created_at=record.created_at,
        updated_at=record.updated_at, live=live, parent=record.parent,
        resumable=record.resumable,
    )


def detail_json(detail: Any) -> dict[str, Any]:
    """``runs.TaskDetail`` as the detail view's JSON: the outcome when known, else the record."""
    record = detail.record
    outcome: dict[str, Any] = dict(detail.outcome or {})
    usage = outcome.get("usage") or record.usage or {}
    if not isinstance(usage, dict):
        usage = {}
    out = TaskDetailOut(
        task=summary(record, detail.events),
        answer=outcome.get("answer"),
        changes=outcome.get("changes", record.changes),
        evidence=outcome.get("evidence", record.evidence),
        providers=outcome.get("providers", {}),
        usage={str(k): dict(v) for k, v in usage.items() if isinstance(v, dict)},
        costs=estimate_all(usage),
        # the streamed text is the live state's (task.live.text), not a line of the log
        events=[event.to_json() for event in detail.events if event.kind != "text-delta"],
        subagents=[summary(child, []) for child in detail.subagents],
    )
    return out.model_dump(mode="json")
