"""REST and WebSocket handlers under /mercury/api/: thin, authenticated, over the runs layer.

Every handler is authenticated (``tornado.web.authenticated``) and authorized for the
``mercury`` resource (jupyter_server's ``authorized``: GET is "read", POST "write").
Mutating requests go through jupyter_server's XSRF check; the WebSocket through its origin
check. Errors are JSON ``{"error": ...}``: 400 any malformed input (body, query, workdir:
:mod:`~mercury_nb.server.inputs`), 404 unknown task, 409 refused by the runs layer, 413
oversized body; tornado's own errors (a query that is not UTF-8) are JSON of that shape too.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path
from typing import Any

import tornado
from jupyter_core.utils import ensure_async
from jupyter_server.auth.decorator import authorized, ws_authenticated
from jupyter_server.base.handlers import APIHandler, JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from jupyter_server.extension.handler import ExtensionHandlerMixin
from pydantic import BaseModel
from tornado import web, websocket

from mercury_nb.contract.task_status import TASK_STATUSES
from mercury_nb.server.approvals import PanelApprover, board_of
from mercury_nb.server.backend import (
    SETTINGS_REFUSALS,
    WorkdirError,
    detail,
    detail_json,
    refusal_reply,
    resolve_workdir,
    runs,
    settings_error,
    summary,
)
from mercury_nb.server.connections import Connections, connections_of
from mercury_nb.server.inputs import MAX_OFFSET, BadRequest, parse_body, query_int
from mercury_nb.server.models import DEFAULT_PAGE, MAX_PAGE, ContinueBody, StartBody, TaskList

AUTH_RESOURCE = "mercury"
PAGE_SIZE_SETTING = "mercury_page_size"
"""The web app setting MercuryServerApp.page_size fills: GET tasks' default ``limit``."""
LATEST_SLACK_S = 2.0
"""``?after=latest`` still sends events recorded this long before the socket opened."""
TASK_ID = r"(?P<task_id>[0-9a-fA-F][0-9a-fA-F.]{0,63})"


class MercuryHandler(ExtensionHandlerMixin, APIHandler):
    """Base: JSON errors, body parsing with a size cap, the server root."""

    auth_resource = AUTH_RESOURCE

    def fail(self, status: int, message: str, **extra: Any) -> None:
        self.set_status(status)
        self.finish(json.dumps({"error": message, **extra}))

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """Tornado's errors (a query argument that is not UTF-8, a missing XSRF token) as
        the API's JSON ``{"error": ...}``; an unexpected exception says no more than that."""
        error = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(error, BadRequest):  # a malformed body (body_as raises it)
            message = error.message
        elif isinstance(error, web.HTTPError):
            message = error.log_message or error.reason or self._reason
        else:
            message = self._reason
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"error": message}))

    def body_as(self, model: type[BaseModel], *, optional: bool = False, **bound: int) -> Any:
        """The body as ``model``; a malformed one raises :class:`BadRequest`, which
        :meth:`write_error` answers as JSON (400, 413); ``bound``: ``max_bytes``."""
        return parse_body(self.request.body or b"", model, optional=optional, **bound)

    @property
    def root(self) -> Path:
        return Path(self.settings.get("server_root_dir") or self.serverapp.root_dir)

    @property
    def connections(self) -> Connections:
        """The models the "Connect a model" form connected (their key, their endpoint)."""
        return connections_of(self.settings)

    async def write_detail(self, task_id: str) -> None:
        try:  # the ledger read (a flush of queued writes, the events) off the server's loop
            found = await asyncio.to_thread(detail, task_id)
        except LookupError as error:  # an ambiguous prefix
            return self.fail(400, str(error))
        if found is None:
            self.fail(404, f"no task {task_id}")
        else:
            self.finish(json.dumps(detail_json(found)))


class TasksHandler(MercuryHandler):
    """GET: the task list (``workspace``, ``status``, ``limit``, ``offset``; without ``limit``
    a page is the server's page size: the panel pages by the ``limit`` it gets). POST: start."""

    @tornado.web.authenticated
    @authorized
    async def get(self) -> None:
        default = int(self.settings.get(PAGE_SIZE_SETTING, DEFAULT_PAGE))
        try:
            limit = query_int(self.get_argument("limit", str(default)), "limit", 1, MAX_PAGE)
            offset = query_int(self.get_argument("offset", "0"), "offset", 0, MAX_OFFSET)
        except BadRequest as error:
            return self.fail(error.status, error.message)
        status = self.get_argument("status", None) or None
        if status is not None and status not in TASK_STATUSES:
            return self.fail(400, f"status must be one of {', '.join(TASK_STATUSES)}")
        workspace = self.get_argument("workspace", None)
        where = None
        if workspace is not None:
            try:
                where = str(resolve_workdir(self.root, workspace))
            except WorkdirError as error:
                return self.fail(400, str(error))
        def read() -> TaskList:
            records = runs.list_tasks(workspace=where, status=status, limit=limit + 1,
                                      offset=offset)
            return TaskList(tasks=[summary(r) for r in records[:limit]], limit=limit,
                            offset=offset, has_more=len(records) > limit)

        page = await asyncio.to_thread(read)
        self.finish(page.model_dump_json())

    @tornado.web.authenticated
    @authorized
    async def post(self) -> None:
        body: StartBody = self.body_as(StartBody)
        flags: dict[str, Any] = {"workdir": self.root / body.workdir}  # the door checks it
        if body.model:
            flags.update(model=body.model, fallbacks=tuple(body.fallbacks))
        connected = self.connections.get(body.model or "")
        if connected is not None:  # its key and endpoint go to this one model only
            flags.update(fallbacks=(), api_base=connected.api_base)
        if body.max_steps is not None:
            flags["max_steps"] = body.max_steps
        approver = PanelApprover(board_of(self.settings))  # asks on the task's detail
        run = await runs.submit_off_loop(runs.RunRequest(
            task=body.task, flags=flags, env=self.connections.env_for(body.model),
            report=self.log.warning, within=self.root, refuse_missing_key=True,
            approver=approver, approver_in="panel"))
        if isinstance(run, runs.Refusal):
            if run.kind in SETTINGS_REFUSALS:
                return self.fail(400, settings_error(run, body.workdir))
            message, fields = refusal_reply(run)  # a missing key's links the form
            return self.fail(409, message, **fields)
        approver.task_id = run.task_id  # no await since the door: it has not asked yet
        self.set_status(201)
        self.finish(json.dumps({"task_id": run.task_id}))


class TaskHandler(MercuryHandler):
    """GET one task's detail."""

    @tornado.web.authenticated
    @authorized
    async def get(self, task_id: str) -> None:
        await self.write_detail(task_id)


class StopHandler(MercuryHandler):
    """POST: stop a running task (any process; honoured within a second)."""

    @tornado.web.authenticated
    @authorized
    async def post(self, task_id: str) -> None:
        reply = await asyncio.to_thread(runs.request_stop, task_id)  # off the server's loop
        if reply.kind == "unknown":
            return self.fail(404, reply.message)
        self.finish(json.dumps({"kind": reply.kind, "task_id": reply.task_id,
                                "message": reply.message}))


class ContinueHandler(MercuryHandler):
    """POST: continue a paused (or failed / aborted) task, optionally with a new model."""

    async def continue_env(self, task_id: str, model: str | None) -> dict[str, str] | None:
        """The environment of the resumed run: a connected model's key when the task (or
        the model it continues with) is one."""
        if model is None:
            try:
                found = await asyncio.to_thread(detail, task_id)
            except LookupError:
                found = None
            models = list(found.record.models) if found is not None else []
            model = models[0] if models else None
        return self.connections.env_for(model)

    @tornado.web.authenticated
    @authorized
    async def post(self, task_id: str) -> None:
        body: ContinueBody = self.body_as(ContinueBody, optional=True)
        flags: dict[str, Any] = {}
        if body.model:
            flags.update(model=body.model, fallbacks=())
        if body.max_steps is not None:
            flags["max_steps"] = body.max_steps
        approver = PanelApprover(board_of(self.settings))
        run = await runs.submit_off_loop(runs.RunRequest(resume=True, task_id=task_id, flags=flags,
                                          flags_over_config=False, report=self.log.warning,
                                          within=self.root, approver=approver, approver_in="panel",
                                          env=await self.continue_env(task_id, body.model)))
        if isinstance(run, runs.Refusal):
            if run.kind == "bad-max-steps":
                return self.fail(400, settings_error(run, ""))
            status = {"unknown-task": 404, "outside-root": 403}.get(run.kind, 409)
            return self.fail(status, run.message, kind=run.kind)
        approver.task_id = run.task_id
        self.finish(json.dumps({"task_id": run.task_id}))


class EventsSocket(ExtensionHandlerMixin, WebSocketMixin, websocket.WebSocketHandler,
                   JupyterHandler):
    """WebSocket: every recorded event (``?task_id=`` to narrow, ``?after=`` to resume)."""

    auth_resource = AUTH_RESOURCE
    _pump: asyncio.Task[None] | None = None
    _query: tuple[str | None, int, float | None] = (None, 0, None)

    def set_default_headers(self) -> None:
        """No JupyterHandler default headers on a WebSocket upgrade."""

    @ws_authenticated
    async def get(self, *args: Any, **kwargs: Any) -> None:
        user = self.current_user
        if not await ensure_async(self.authorizer.is_authorized(self, user, "read",
                                                                AUTH_RESOURCE)):
            raise web.HTTPError(403)
        try:  # before the upgrade: a malformed query is a JSON 400, not a silent socket
            self._query = await self._read_query()
        except BadRequest as error:
            self.set_status(error.status)
            self.set_header("Content-Type", "application/json")
            self.finish(json.dumps({"error": error.message}))
            return
        await super().get(*args, **kwargs)

    async def _read_query(self) -> tuple[str | None, int, float | None]:
        """``task_id`` (an id or a unique prefix), ``after`` (an event id or ``latest``)."""
        task_id = self.get_argument("task_id", None) or None
        if task_id is not None:
            if re.fullmatch(TASK_ID, task_id) is None:
                raise BadRequest(400, "task_id must be a task id or a prefix of one")
            try:
                await asyncio.to_thread(detail, task_id)
            except LookupError as error:  # an ambiguous prefix
                raise BadRequest(400, str(error)) from None
        raw = self.get_argument("after", "0")
        if raw == "latest":
            return task_id, 0, time.time() - LATEST_SLACK_S
        return task_id, query_int(raw, "after", 0, MAX_OFFSET), None

    def open(self, *args: Any, **kwargs: Any) -> None:
        super().open(*args, **kwargs)  # starts the ping loop
        self._pump = asyncio.ensure_future(self._forward(*self._query))

    async def _forward(self, task_id: str | None, after: int, since: float | None) -> None:
        """Send each event as JSON with its task's live state folded so far (``live``: the
        panel shows it, folding nothing); ``since`` (``?after=latest``) skips older ones."""
        try:
            lives: dict[str, runs.LiveState] = {}
            async for event in runs.watch(task_id, after=after):
                live = lives[event.task_id] = runs.fold_live(
                    lives.get(event.task_id, runs.LiveState()), event)
                if event.kind == "task-finished":
                    lives.pop(event.task_id, None)
                if since is not None and event.at < since:
                    continue
                await self.write_message(json.dumps({**event.to_json(),
                                                     "live": live.to_json()}))
        except (websocket.WebSocketClosedError, asyncio.CancelledError):
            return

    def on_message(self, message: str | bytes) -> None:
        return None  # the socket only sends

    def on_close(self) -> None:
        if self._pump is not None:
            self._pump.cancel()


def handlers() -> list[tuple[str, type]]:
    base = "/mercury/api"
    return [
        (rf"{base}/tasks", TasksHandler),
        (rf"{base}/tasks/{TASK_ID}", TaskHandler),
        (rf"{base}/tasks/{TASK_ID}/stop", StopHandler),
        (rf"{base}/tasks/{TASK_ID}/continue", ContinueHandler),
        (rf"{base}/events", EventsSocket),
    ]
