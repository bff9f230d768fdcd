"""A session's lifecycle, written once: run to an ending (a stop ends it aborted), measure, finish.

:func:`until_ending` runs the loop (or any step that yields an ending) and turns a
cancellation (Stop, a stop request from any process) into ``Aborted(by="stop")``: it
uncancels the current task (the cancellation is handled) and marks the turn it cut aborted.
:func:`measured_outcome` measures the changes against the start snapshot (keeping what undo
needs of them: :mod:`mercury_nb.workspace.undo_store`) and builds the
outcome; :func:`setup_failed` is the one ending of a chain that cannot be resolved.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path

from mercury_nb.agent.events import EventSink, TaskFinished
from mercury_nb.agent.finish import build_outcome
from mercury_nb.agent.session import TaskSession
from mercury_nb.agent.spending import priced
from mercury_nb.contract.endings import Aborted, Ending, Failed
from mercury_nb.contract.outcome import TaskOutcome
from mercury_nb.contract.user_denials import after_user_denial
from mercury_nb.contract.vocabulary import TurnVerdict
from mercury_nb.transport.factory import SETUP_FAILED
from mercury_nb.workspace.changes import measure_changes
from mercury_nb.workspace.snapshot import Snapshot
from mercury_nb.workspace.undo_store import keep_task_states


async def until_ending(step: Callable[[], Awaitable[Ending]], session: TaskSession) -> Ending:
    """``await step()``; a cancellation of it ends ``aborted`` (handled: see the module)."""
    try:
        return await step()
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None:
            current.uncancel()  # the cancellation is handled: the outcome is finished after
        session.last_verdict = TurnVerdict.ABORTED.value  # the turn it cut ended aborted
        return Aborted(by="stop")


async def measured_outcome(session: TaskSession, ending: Ending, snapshot: Snapshot,
                           root: Path) -> TaskOutcome:
    """The outcome of ``ending``, with the change summary measured against ``snapshot``; a
    task that cannot finish after the user denied an action pauses naming it."""
    ending = after_user_denial(ending, session.user_denied)
    report = await asyncio.to_thread(measure_changes, snapshot, root)
    if report.changes:  # what undo needs: the states and the "before" bytes, under home
        config = session.config
        with contextlib.suppress(OSError):
            await asyncio.to_thread(keep_task_states, snapshot, report, config.home,
                                    session.task_id, config.undo_max_bytes,
                                    session.before_copies.shas)
    return build_outcome(session, ending, report, await priced(session.usage))


async def setup_failed(session: TaskSession, snapshot: Snapshot, root: Path,
                       error: Exception, sink: EventSink) -> TaskOutcome:
    """The model chain could not be resolved: the task ends ``Failed`` with the setup banner."""
    outcome = await measured_outcome(session, Failed(SETUP_FAILED.format(error=error)),
                                     snapshot, root)
    sink(TaskFinished(outcome))
    return outcome
