"""The live-edit route's HTTP side: the panel reports open notebooks, takes edit requests, answers.

``POST /mercury/api/live/poll`` ``{"paths": [...]}`` says which notebooks (relative to the
server root) JupyterLab has open and waits up to ``live_poll_s`` for edit requests for them
(it refreshes the open record while it waits); ``POST /mercury/api/live/ack`` carries
JupyterLab's answer to one request (``applied``, with the cells of an outputs request it left
alone as ``skipped`` and, when the document held unsaved changes, the document just before
the change as ``before``: its body may be as large as a notebook the start snapshot keeps;
``refused`` with the cell's current source; or ``not-open``). Both go through the ledger,
which the agent's process shares.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from functools import cache
from pathlib import Path
from typing import Any, Literal

import tornado
from jupyter_server.auth.decorator import authorized
from pydantic import BaseModel, Field

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.home import home_of
from mercury_nb.ledger.live_edits import LiveEditStore, store_for
from mercury_nb.server.handlers import MercuryHandler
from mercury_nb.server.models import MAX_BODY_BYTES

MAX_OPEN = 200
"""Most notebooks one poll reports open."""
MAX_CELLS = 10_000
"""Most cells an outputs request's answer names as skipped."""
REFRESH_S = 1.0
"""A held poll renews its notebooks' open record this often."""


class PollBody(BaseModel):
    paths: list[str] = Field(max_length=MAX_OPEN)
    wait: bool = True


class AckBody(BaseModel):
    id: int = Field(ge=1)
    state: Literal["applied", "refused", "not-open"]
    source: str | None = None
    cell: str | None = None
    skipped: list[str] | None = Field(default=None, max_length=MAX_CELLS)
    before: dict[str, Any] | None = None
    """The open notebook just before the change applied, when it held unsaved changes."""


@cache
def _config() -> MercuryConfig:
    try:
        return MercuryConfig.load(os.environ, check_workdir=False)
    except ValueError:
        return MercuryConfig()


class LiveHandler(MercuryHandler):
    def store(self) -> LiveEditStore:
        return store_for(home_of(base=self.settings))

    def notebook(self, rel: str) -> Path | None:
        """``rel`` as a notebook's absolute path inside the server root, else None."""
        root = self.root.resolve()
        target = (root / rel).resolve()
        if not rel.endswith(".ipynb") or root not in target.parents:
            return None
        return target


class LivePollHandler(LiveHandler):
    def gone(self) -> bool:
        """Whether the panel closed this poll (a tab closed, the list of notebooks changed)."""
        stream = getattr(self.request.connection, "stream", None)
        return bool(stream is not None and stream.closed())

    @tornado.web.authenticated
    @authorized
    async def post(self) -> None:
        body: PollBody = self.body_as(PollBody)
        config = _config()
        opened = {path: rel for rel in body.paths if (path := self.notebook(rel)) is not None}
        store = await asyncio.to_thread(self.store)
        await asyncio.to_thread(store.report_open, opened)
        start = refreshed = time.monotonic()
        wait = config.live_poll_s if body.wait else 0.0
        claimed: list[tuple[int, Path, dict[str, Any]]] = []
        while opened:
            claimed = await asyncio.to_thread(store.claim, opened)
            now = time.monotonic()
            if claimed or now - start >= wait or self.gone():
                break
            if now - refreshed >= REFRESH_S:
                await asyncio.to_thread(store.report_open, opened)
                refreshed = now
            await asyncio.sleep(config.live_tick_s)
        requests = [{**request, "id": id_, "path": opened[path]}
                    for id_, path, request in claimed]
        self.finish(json.dumps({"requests": requests}))


class LiveAckHandler(LiveHandler):
    @tornado.web.authenticated
    @authorized
    async def post(self) -> None:
        body: AckBody = self.body_as(AckBody, max_bytes=MAX_BODY_BYTES
                                     + _config().snapshot_max_file_bytes)
        reply = {key: value for key, value in (
            ("source", body.source), ("cell", body.cell), ("skipped", body.skipped),
            ("before", body.before)) if value is not None}
        store = await asyncio.to_thread(self.store)
        taken = await asyncio.to_thread(store.acknowledge, body.id, body.state, reply)
        if not taken:
            return self.fail(409, f"edit request {body.id} is no longer waiting")
        self.finish(json.dumps({"id": body.id, "state": body.state}))


def live_routes() -> list[tuple[str, type]]:
    return [("/mercury/api/live/poll", LivePollHandler),
            ("/mercury/api/live/ack", LiveAckHandler)]
