"""The panel's approver: a task's pending approval held in the server, answered over REST.

A task started (or continued) from the panel gets a :class:`PanelApprover`; when the
permission mode asks, it holds a future in the server's :class:`ApprovalBoard` under the
task's id with the question's number in this run (``ApprovalRequest.request_id``, numbered
by the permission edge, which puts the same number on the permission-asked event the live
state's ``approval.request`` shows) and waits for ``POST /mercury/api/tasks/{id}/approval``.
The permission edge bounds the wait by ``approval_timeout_s`` and denies on a timeout or an
error (fails closed). The future is settled on its own loop (``call_soon_threadsafe``),
whichever thread answers.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import Any, Literal

from mercury_nb.contract.permissions import ApprovalAnswer, ApprovalRequest

SETTING = "mercury_approvals"
PANEL_ANSWERS: dict[str, ApprovalAnswer] = {
    "once": "allow-once", "always": "always-allow", "deny": "deny"}
"""The endpoint's ``answer`` words and the approval answer each one gives."""

Settled = Literal["answered", "nothing-pending", "stale"]


@dataclass(frozen=True)
class PendingApproval:
    """One question waiting: its number in the run, and the future its answer settles."""

    request_id: int
    request: ApprovalRequest
    future: asyncio.Future[ApprovalAnswer]
    loop: asyncio.AbstractEventLoop


def _settle(future: asyncio.Future[ApprovalAnswer], answer: ApprovalAnswer) -> None:
    if not future.done():
        future.set_result(answer)


class ApprovalBoard:
    """The server's pending approvals, at most one per task (a task asks one at a time)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[str, PendingApproval] = {}

    def hold(self, task_id: str, pending: PendingApproval) -> None:
        with self._lock:
            self._pending[task_id] = pending

    def drop(self, task_id: str, pending: PendingApproval) -> None:
        with self._lock:
            if self._pending.get(task_id) is pending:
                del self._pending[task_id]

    def pending(self, task_id: str) -> PendingApproval | None:
        with self._lock:
            return self._pending.get(task_id)

    def answer(self, task_id: str, request_id: int, answer: ApprovalAnswer) -> Settled:
        """Settle the task's pending question ``request_id`` with ``answer``."""
        with self._lock:
            pending = self._pending.get(task_id)
            if pending is None:
                return "nothing-pending"
            if pending.request_id != request_id or pending.future.done():
                return "stale"
            del self._pending[task_id]
        pending.loop.call_soon_threadsafe(_settle, pending.future, answer)
        return "answered"


class PanelApprover:
    """The approver of one run started from the panel: its questions go on ``board`` under
    ``task_id`` (known once the door has taken the task; before that it cannot ask)."""

    def __init__(self, board: ApprovalBoard) -> None:
        self.board = board
        self.task_id: str | None = None

    async def __call__(self, request: ApprovalRequest, timeout_s: float) -> ApprovalAnswer:
        if self.task_id is None:
            raise RuntimeError("the panel does not know this task yet")
        loop = asyncio.get_running_loop()
        pending = PendingApproval(request.request_id, request, loop.create_future(), loop)
        self.board.hold(self.task_id, pending)
        try:  # the permission edge's wait_for bounds this by timeout_s
            return await pending.future
        finally:
            self.board.drop(self.task_id, pending)


def board_of(settings: dict[str, Any]) -> ApprovalBoard:
    """The server's approval board (created on first use)."""
    found = settings.get(SETTING)
    if found is None:
        found = settings[SETTING] = ApprovalBoard()
    assert isinstance(found, ApprovalBoard)
    return found
