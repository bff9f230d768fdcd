"""Plain-text views of the ledger: the task table and one task's detail (no clock inside)."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from typing import Any

from mercury_nb.contract.text_cut import clip
from mercury_nb.ledger.event_words import event_words
from mercury_nb.ledger.records import EventRecord, TaskRecord

TASK_CHARS = 40
BANNER_CHARS = 60
NO_TASKS = "No tasks in the work ledger yet."


def age(seconds: float) -> str:
    """``42s``, ``5m``, ``3h``, ``2d``: how long ago, coarsely."""
    seconds = max(0.0, seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def first_line(text: str | None, limit: int) -> str:
    """The first line of ``text``, cut to ``limit`` characters with "…"."""
    line = " ".join((text or "").strip().splitlines()[:1]).strip()
    return clip(line, limit)  # redacted before the cut


def tasks_table(records: Sequence[TaskRecord], now: float, width: int | None = None) -> str:
    """id, status, age, task, banner (first line): one row per task, newest first.

    With ``width``, a longer row wraps on word boundaries (never inside a word) onto lines
    indented to the task column; a front end that breaks long lines anywhere (JupyterLab's
    output area does) then never splits a word."""
    if not records:
        return NO_TASKS
    rows = [("id", "status", "age", "task", "banner")]
    rows.extend(
        (r.id, r.status, age(now - r.updated_at), first_line(r.task, TASK_CHARS),
         first_line(r.banner or r.blocker, BANNER_CHARS))
        for r in records
    )
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row[:4], widths, strict=True))
        + "  " + row[4]
        for row in rows
    ]
    if width is not None:
        indent = " " * (sum(widths[:3]) + 2 * 3)
        lines = [wrapped for line in lines for wrapped in wrap_row(line, width, indent)]
    return "\n".join(line.rstrip() for line in lines)


def wrap_row(line: str, width: int, indent: str) -> list[str]:
    """``line`` cut into lines of at most ``width`` at spaces (column gaps kept); a single
    word longer than a line stays whole."""
    if len(line) <= width:
        return [line]
    wrapper = textwrap.TextWrapper(
        width=width, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False,
        replace_whitespace=False, drop_whitespace=True,
    )
    return wrapper.wrap(line)


def _change_line(change: dict[str, object]) -> str:
    return (f"  {change.get('kind', 'modified')} {change.get('path')} "
            f"(+{change.get('added', 0)} −{change.get('removed', 0)})")


def _evidence_line(item: dict[str, object]) -> str:
    code = item.get("exit_code")
    mark = "✓" if code == 0 else "✗"
    if item.get("kind") == "read-back":
        result = "" if code == 0 else " (could not be read)"
        return f"  {mark} read back {item.get('path')}{result}"
    stale = "" if item.get("after_last_change", True) else " (before the latest changes)"
    return f"  {mark} {item.get('command')} → exit {code}{stale}"


def _event_data(event: EventRecord) -> dict[str, Any]:
    """An event's recorded fields; a row from before they were kept has its columns only."""
    data: dict[str, Any] = {"verdict": event.verdict, "decision": event.decision,
                            "text": event.text}
    try:
        loaded = json.loads(event.data) if event.data else None
    except ValueError:
        loaded = None
    if isinstance(loaded, dict):
        data.update(loaded)
    return data


def _event_line(event: EventRecord, record: TaskRecord) -> str | None:
    words = event_words(event.kind, _event_data(event))
    if words is None:
        return None
    return f"  +{age(event.at - record.created_at)} {first_line(words, 100)}"


def _checkpoint_line(record: TaskRecord) -> str:
    """Whether a checkpoint is kept, and whether a continue can use it."""
    if not record.has_checkpoint:
        return "none"
    if record.status == "completed":
        return "yes — the task is complete"
    return "yes — resumable" if record.resumable else "yes — a continue cannot cure this ending"


def task_detail_text(record: TaskRecord, events: Sequence[EventRecord], now: float,
                subagents: Sequence[TaskRecord] = ()) -> str:
    """Everything the ledger knows about one task, for ``%mercury show ID``: its parent when
    it is a sub-agent, and the ``subagents`` it delegated."""
    lines = [
        f"task {record.id} · {record.status}",
        f"  {record.task}",
        f"workspace: {record.workspace}",
        f"models: {', '.join(record.models) or '—'}",
        f"verdict: {record.verdict or '—'} · steps: {record.steps}",
        f"started {age(now - record.created_at)} ago · updated {age(now - record.updated_at)} ago",
        f"checkpoint: {_checkpoint_line(record)}",
    ]
    if record.parent:
        lines.append(f"sub-agent of: {record.parent}")
    if record.blocker:
        lines.append(f"blocker: {record.blocker}")
    if record.banner:
        lines.extend(["banner:", *(f"  {line}" for line in record.banner.splitlines())])
    if record.changes:
        lines.append("changes:")
        lines.extend(_change_line(change) for change in record.changes)
    if record.evidence:
        lines.append("evidence:")
        lines.extend(_evidence_line(item) for item in record.evidence)
    if subagents:
        lines.append("sub-agents:")
        lines.extend(f"  {sub.id} · {sub.status} · {first_line(sub.task, TASK_CHARS)}"
                     for sub in subagents)
    if events:
        lines.append("events (time since the task was first recorded):")
        lines.extend(line for event in events
                     if (line := _event_line(event, record)) is not None)
    return "\n".join(lines)
