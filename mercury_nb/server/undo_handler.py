"""POST /mercury/api/tasks/{id}/undo: the panel's Undo (a whole task) and Revert (one file).

Thin over :func:`mercury_nb.runs.undo`: the body is ``{}`` (every file) or ``{"path": P}``
(one file of the task's changed-files list). The reply is the undo's report
(``restored``, ``left`` with why, ``not_undoable``, ``undo_id``: null when the undo changed
nothing, so it was not recorded); 404 an unknown task, 409 a
task that cannot be undone now (running, or no record kept).
"""

from __future__ import annotations

import asyncio
import json

import tornado
from jupyter_server.auth.decorator import authorized
from pydantic import BaseModel, ConfigDict, Field

from mercury_nb.server.backend import runs
from mercury_nb.server.handlers import TASK_ID, MercuryHandler


class UndoBody(BaseModel):
    """POST /mercury/api/tasks/{id}/undo: ``path`` reverts that file only."""

    model_config = ConfigDict(extra="forbid")

    path: str | None = Field(default=None, min_length=1, max_length=4096)


class UndoHandler(MercuryHandler):
    """POST: undo a finished task's file changes (or one file of them)."""

    @tornado.web.authenticated
    @authorized
    async def post(self, task_id: str) -> None:
        body: UndoBody = self.body_as(UndoBody, optional=True)
        config = await asyncio.to_thread(runs.plan, {}, check_workdir=False)
        paths = (body.path,) if body.path is not None else None
        report = await asyncio.to_thread(runs.undo, task_id, config, paths=paths)
        if isinstance(report, runs.Refusal):
            status = 404 if report.kind == "unknown-task" else 409
            return self.fail(status, report.message, kind=report.kind)
        self.finish(json.dumps(report.to_json()))


def undo_routes() -> list[tuple[str, type]]:
    return [(rf"/mercury/api/tasks/{TASK_ID}/undo", UndoHandler)]
