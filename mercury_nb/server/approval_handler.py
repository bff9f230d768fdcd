"""POST /mercury/api/tasks/{id}/approval: the panel's Allow once / Always allow / Deny.

The body is ``{"request": N, "answer": "once" | "always" | "deny"}``, ``N`` the pending
approval's number (the task's ``live.approval.request``). 400 a bad body, 404 an unknown
task, 409 nothing pending or a stale ``request`` (already answered, timed out, or a later
question is pending). A sub-agent's question is held by its parent's approver (they share it,
and its numbering): answered on the sub-agent's row, it goes to the parent's.
"""

from __future__ import annotations

import asyncio
import json
from typing import Literal

import tornado
from jupyter_server.auth.decorator import authorized
from pydantic import BaseModel, ConfigDict, Field

from mercury_nb.server.approvals import PANEL_ANSWERS, board_of
from mercury_nb.server.backend import detail
from mercury_nb.server.handlers import TASK_ID, MercuryHandler


class ApprovalBody(BaseModel):
    """POST /mercury/api/tasks/{id}/approval: the answer to pending question ``request``."""

    model_config = ConfigDict(extra="forbid")

    request: int = Field(ge=1)
    answer: Literal["once", "always", "deny"]


class ApprovalHandler(MercuryHandler):
    """POST: answer the task's pending approval."""

    @tornado.web.authenticated
    @authorized
    async def post(self, task_id: str) -> None:
        body: ApprovalBody = self.body_as(ApprovalBody)
        board = board_of(self.settings)
        asker = task_id  # whose approver holds the question
        if board.pending(task_id) is None:
            try:
                found = await asyncio.to_thread(detail, task_id)
            except LookupError as error:  # an ambiguous prefix
                return self.fail(400, str(error))
            if found is None:
                return self.fail(404, f"no task {task_id}")
            parent = found.record.parent  # a sub-agent asks through its parent's approver
            if parent is not None and board.pending(parent) is not None:
                asker = parent
        settled = board.answer(asker, body.request, PANEL_ANSWERS[body.answer])
        if settled != "answered":
            return self.fail(409, f"no approval {body.request} is waiting on task {task_id}",
                             kind=settled)
        self.finish(json.dumps({"task_id": task_id, "request": body.request,
                                "answer": PANEL_ANSWERS[body.answer]}))


def approval_routes() -> list[tuple[str, type]]:
    return [(rf"/mercury/api/tasks/{TASK_ID}/approval", ApprovalHandler)]
