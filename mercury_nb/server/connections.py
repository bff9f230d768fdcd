"""The models the panel's "Connect a model" form connected: their endpoint, and their key.

A key is kept where the user chose, and nowhere else:

* ``session``: in this server process's memory until it stops (not in ``os.environ``, which
  every kernel Lab starts afterwards would inherit);
* ``file``: also in ``$MERCURY_HOME/connections.json``, created with mode 0600, read back
  when the server starts.

It reaches a run only as the run's own environment (:meth:`Connections.env_for`:
``MERCURY_API_KEY``, mercury's own key, which goes to that model's endpoint only, since the
run's chain is that one model), never the ledger (a checkpoint leaves ``api_key`` out), and
never goes back to the browser: :meth:`Connection.public` has no key in it.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from mercury_nb.contract.setup.keys import MERCURY_KEY

Storage = Literal["session", "file"]
SETTING = "mercury_connections"
"""The web app setting holding the server's :class:`Connections` (app.py loads them)."""
FILE_NAME = "connections.json"
FILE_MODE = 0o600


@dataclass(frozen=True)
class Connection:
    model: str
    api_base: str | None
    storage: Storage
    key: str | None

    def public(self) -> dict[str, Any]:
        """What the browser may see: never the key, only whether there is one."""
        return {"model": self.model, "api_base": self.api_base, "storage": self.storage,
                "has_key": bool(self.key)}


def storage_text(storage: Storage, home: Path) -> str:
    """Where a key is kept, in the words the form shows."""
    if storage == "file":
        return f"saved in {home / FILE_NAME} (mode 0600), read again when Lab starts"
    return "kept in this server's memory until Lab stops"


class Connections:
    """The connected models of one server, by model name (the last connect wins)."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self._by_model: dict[str, Connection] = {}
        self._lock = threading.Lock()

    @property
    def path(self) -> Path:
        return self.home / FILE_NAME

    def load(self) -> list[str]:
        """Read the saved connections; the problems found (an unreadable file, a file others
        may read, which is then not used) as notices."""
        if not self.path.exists():
            return []
        mode = self.path.stat().st_mode & 0o777
        if mode & 0o077:
            return [f"{self.path} is readable by others (mode {mode:o}): not used; "
                    f"chmod 600 it to use the keys in it"]
        try:
            rows = json.loads(self.path.read_text(encoding="utf-8"))
            found = [Connection(str(row["model"]), row.get("api_base") or None, "file",
                                row.get("key") or None) for row in rows]
        except (OSError, ValueError, KeyError, TypeError) as error:
            return [f"{self.path} could not be read: {error}"]
        with self._lock:
            for connection in found:
                self._by_model[connection.model] = connection
        return []

    def get(self, model: str) -> Connection | None:
        with self._lock:
            return self._by_model.get(model)

    def all(self) -> list[Connection]:
        with self._lock:
            return sorted(self._by_model.values(), key=lambda c: c.model)

    def add(self, connection: Connection) -> None:
        with self._lock:
            self._by_model[connection.model] = connection
            saved = [c for c in self._by_model.values() if c.storage == "file"]
            self._write(saved)

    def _write(self, saved: list[Connection]) -> None:
        if not saved and not self.path.exists():
            return
        self.home.mkdir(parents=True, exist_ok=True)
        rows = [{"model": c.model, "api_base": c.api_base, "key": c.key} for c in saved]
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        try:
            os.fchmod(fd, FILE_MODE)  # an older file keeps its mode through O_CREAT
            os.write(fd, json.dumps(rows, indent=1).encode("utf-8"))
        finally:
            os.close(fd)

    def env_for(self, model: str | None, base: Mapping[str, str] | None = None
                ) -> dict[str, str] | None:
        """The environment a run of ``model`` gets (None: ``model`` is not connected, or
        has no key: the server's own environment)."""
        connection = self.get(model) if model else None
        if connection is None or not connection.key:
            return None
        return {**(os.environ if base is None else base), MERCURY_KEY: connection.key}


def connections_of(settings: dict[str, Any]) -> Connections:
    """The server's connections (created on first use, under the configured home)."""
    found = settings.get(SETTING)
    if found is None:
        from mercury_nb.runs import plan

        found = settings[SETTING] = Connections(plan({}).home)
    return found
