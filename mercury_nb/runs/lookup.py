"""Why nothing started (a typed refusal), and finding a task by its id or a unique prefix."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mercury_nb.ledger.records import AmbiguousTaskId, TaskRecord
from mercury_nb.ledger.store_reads import LedgerReads
from mercury_nb.ledger.texts import UNKNOWN_TASK

RefusalKind = Literal["paused-duplicate", "nothing-to-continue", "already-claimed",
                      "unknown-task", "cannot-continue", "missing-workspace", "no-ledger",
                      "bad-settings", "workspace-busy", "bad-workdir", "bad-max-steps",
                      "missing-key", "empty-task", "outside-root", "no-sandbox"]
"""Why nothing started (``workspace-busy``: another task runs in the same workspace;
``bad-workdir`` / ``bad-max-steps`` / ``missing-key`` / ``empty-task``: the request's own
settings, checked once by :func:`~mercury_nb.runs.resolve.resolve`; ``outside-root``: the
workspace lies outside the folder the front end serves; ``no-sandbox``: the sandbox was
asked for and cannot run here, the message says why and how to fix it)."""


@dataclass(frozen=True)
class Refusal:
    """Nothing starts; ``message`` tells why and ``kind`` says it as a type. ``paused`` is
    True when the answer is that the task is paused (the CLI exits 3), False for a request
    that cannot be served (exit 2)."""

    message: str
    record: TaskRecord | None = None
    paused: bool = False
    kind: RefusalKind = "unknown-task"
    value: str | None = None
    """The refused value (the workdir, the step count) for a front end's own wording."""


def find_task(ledger: LedgerReads, task_id_or_prefix: str) -> TaskRecord | Refusal:
    """The task with this id (or the only one whose id starts with it), or an
    ``unknown-task`` refusal saying that no task, or more than one, matches."""
    try:
        record = ledger.get(task_id_or_prefix)
    except AmbiguousTaskId as error:
        return Refusal(str(error), kind="unknown-task")
    if record is None:
        return Refusal(UNKNOWN_TASK.format(task_id=task_id_or_prefix), kind="unknown-task")
    return record
