"""Every user-facing text of the work ledger and of resuming, in one place."""

from __future__ import annotations

PAUSED_DUPLICATE = 'This task was paused before completing. Send "continue" to resume it…'
"""The answer when a paused task's text is sent again: nothing starts twice."""

INTERRUPTED_BLOCKER = "interrupted: the process stopped mid-task"
"""The blocker of a task left running by a process that died (kernel restart, kill -9)."""

INTERRUPTED_BANNER = (
    "I've paused — the process running this task stopped mid-task. "
    'Send "continue" and I\'ll pick up from the last checkpoint.'
)

CORRUPT_NOTICE = (
    "mercury: the work ledger {path} was damaged; it was moved aside as {moved} and a fresh "
    "ledger was started."
)

RECOVERED_NOTICE = (
    "mercury: {count} task(s) were interrupted when their process stopped; they are paused "
    "now: {ids}. Resume with %mercury continue ID (or python -m mercury_nb continue ID)."
)

LEDGER_FAILED = "mercury: the work ledger failed ({error}); the task goes on without it."

LEDGER_UNAVAILABLE = "mercury: the work ledger at {path} could not be opened ({error})."

NOTHING_TO_CONTINUE = "There is no paused task to continue in {workspace}."

UNKNOWN_TASK = "There is no task {task_id!r} in the work ledger."

CANNOT_CONTINUE = "Task {task_id} is {status}; only a paused, failed or aborted task continues."

NOT_RESUMABLE = (
    "Task {task_id} cannot be continued as it is: a continue would end the same way "
    "({reason}). Fix the cause and run it again, or continue it with another --model."
)

ALREADY_CLAIMED = "Task {task_id} was just resumed elsewhere; it is not started twice."

MISSING_WORKSPACE = "Task {task_id}'s workspace {workspace} is not a folder any more."

OUTSIDE_ROOT = "workspace {workspace!r} is outside the server root"

NO_LEDGER = "The work ledger is not available, so there is nothing to continue."
