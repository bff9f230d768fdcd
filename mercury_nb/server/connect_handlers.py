"""The model picker's API: GET /mercury/api/models (the choices, demos and connected models
marked) and POST /mercury/api/models/connect (the "Connect a model" form).

A connect checks the model with one cheap request (:mod:`~mercury_nb.server.model_check`)
before it keeps anything: a refusal is 422 with the provider's message verbatim in
``error``; nothing is kept then. No reply of either endpoint ever holds a key.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import tornado
from jupyter_server.auth.decorator import authorized
from pydantic import BaseModel, ConfigDict, Field, SecretStr

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.server.backend import runs
from mercury_nb.server.connections import Connection, Connections, connections_of, storage_text
from mercury_nb.server.handlers import MercuryHandler
from mercury_nb.server.model_check import check_model
from mercury_nb.transport.demo_models import DEMOS
from mercury_nb.transport.factory import missing_key_error
from mercury_nb.transport.model_registry import registered_names


class ConnectBody(BaseModel):
    """POST /mercury/api/models/connect."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(min_length=1, max_length=200)
    api_base: str | None = Field(default=None, max_length=2048)
    key: SecretStr | None = Field(default=None, max_length=4096)
    storage: Literal["session", "file"] = "session"


def needs_key(config: MercuryConfig, name: str, connections: Connections) -> str | None:
    """Why ``name`` cannot start here for want of a key (None: it can)."""
    if connections.env_for(name) is not None:
        return None
    connection = connections.get(name)
    base = connection.api_base if connection else config.api_base
    try:
        chosen = config.with_changes(model=name, fallbacks=(), api_base=base)
    except ValueError:
        return None
    return missing_key_error(chosen)


def model_choices(root: Path, connections: Connections) -> dict[str, Any]:
    """The picker: the configured chain, the connected models, the shipped demos and any
    registered scripted model, each with what it is and whether it lacks a key."""
    cfg = runs.plan({})
    connected = {c.model: c for c in connections.all()}
    names = list(dict.fromkeys([*cfg.model_chain, *connected, *DEMOS, *registered_names()]))
    choices = []
    for name in names:
        demo = DEMOS.get(name)
        choices.append({
            "name": name, "demo": demo is not None,
            "description": demo.description if demo else None,
            "connected": name in connected,
            "missing_key": None if demo else needs_key(cfg, name, connections),
        })
    return {"default": cfg.model, "models": names, "choices": choices,
            "connected": [c.public() for c in connected.values()],
            "storage": {kind: storage_text(kind, connections.home)
                        for kind in ("session", "file")},
            "max_steps": cfg.max_steps, "root": str(root.resolve())}


class ModelsHandler(MercuryHandler):
    """GET the models the prompt box offers (:func:`model_choices`) and the configured step
    budget (the prompt box's max-steps default)."""

    @tornado.web.authenticated
    @authorized
    async def get(self) -> None:
        self.finish(json.dumps(model_choices(self.root, connections_of(self.settings))))


class ConnectHandler(MercuryHandler):
    """POST: check a model with one cheap request; on success keep it (and its key where
    the body's ``storage`` says), else 422 with the provider's error verbatim."""

    @tornado.web.authenticated
    @authorized
    async def post(self) -> None:
        body: ConnectBody = self.body_as(ConnectBody)
        key = body.key.get_secret_value().strip() if body.key else ""
        base = (body.api_base or "").strip() or None
        try:
            config = runs.plan({}).with_changes(model=body.model.strip(), fallbacks=(),
                                                api_base=base, api_key=key or None)
        except ValueError as error:
            return self.fail(400, f"invalid settings: {error}")
        result = await check_model(config)
        if not result.ok:
            return self.fail(422, result.error or "the model did not answer",
                             kind="check-failed", http_status=result.status)
        connections = connections_of(self.settings)
        connection = Connection(config.model, base, body.storage, key or None)
        connections.add(connection)
        self.finish(json.dumps({**connection.public(), "reply": result.reply,
                                "kept": storage_text(body.storage, connections.home)}))


def connect_routes() -> list[tuple[str, type]]:
    base = "/mercury/api"
    return [(rf"{base}/models", ModelsHandler), (rf"{base}/models/connect", ConnectHandler)]
