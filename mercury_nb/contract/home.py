"""Where the work ledger lives: the one precedence of ``home``, light enough for startup.

``MERCURY_HOME`` beats a ``home`` traitlets value, which beats ``~/.mercury``; a leading
``~`` is expanded. :class:`~mercury_nb.contract.config.MercuryConfig` validates its ``home``
field with :func:`home_path`, and the front ends that open the ledger before any config is
planned (the server extension's startup, ``%load_ext``, watching, stopping) call
:func:`home_of`, so a task is recorded where the panel reads it. Imports nothing heavy (no
pydantic): the server extension calls it while loading.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

HOME_ENV = "MERCURY_HOME"
LAB_HOME_ENV = "MERCURY_LAB_HOME"
"""Set by the server extension in its own process to the ledger it watches, so the kernels and
terminals that server starts inherit it: their notebook edits reach the open notebooks through
it even where a task's own ``MERCURY_HOME`` names another ledger (:func:`live_home`)."""


def default_home() -> Path:
    """``~/.mercury``: the ledger's folder when nothing names another."""
    return Path.home() / ".mercury"


def home_path(value: str | os.PathLike[str]) -> Path:
    """A configured home as a path, ``~`` expanded."""
    return Path(value).expanduser()


def home_of(environ: Mapping[str, str] | None = None,
            base: Mapping[str, Any] | None = None) -> Path:
    """The ledger's folder before a config is planned: ``MERCURY_HOME``, else ``base``'s
    (the traitlets') ``home``, else :func:`default_home`. Blank values count as unset."""
    env = os.environ if environ is None else environ
    for value in (env.get(HOME_ENV), (base or {}).get("home")):
        if value is not None and str(value).strip():
            return home_path(str(value))
    return default_home()


def live_home(environ: Mapping[str, str], task_home: Path) -> Path:
    """The ledger a task's live notebook edits go through: the JupyterLab's this process was
    started by (``MERCURY_LAB_HOME``), else the task's own home (``task_home``)."""
    value = environ.get(LAB_HOME_ENV)
    return home_path(value) if value is not None and value.strip() else task_home
