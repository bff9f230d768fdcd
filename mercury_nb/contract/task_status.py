"""The statuses a task can have, written once: every layer, and the panel, takes them from here.

The panel's TypeScript union (``labextension/src/status.ts``) is generated from these by
``python scripts/task_status_ts.py``; a test fails when the generated file is not current.
"""

from __future__ import annotations

from typing import Literal, get_args

EndingStatus = Literal["completed", "paused", "failed", "aborted"]
"""How a task ended: a ``TaskOutcome``'s status."""

TaskStatus = Literal["running", EndingStatus]
"""A task's status in the ledger: ``running`` until it ends."""

ENDING_STATUSES: tuple[EndingStatus, ...] = get_args(EndingStatus)
TASK_STATUSES: tuple[TaskStatus, ...] = get_args(TaskStatus)
