"""mercury-nb: a coding agent inside Jupyter; ``%load_ext mercury_nb`` registers ``%%mercury``.

Importing the package is light on purpose: the agent loop (and through it litellm) is only
imported when ``mercury_nb.run_task`` is first used or a ``%%mercury`` cell runs.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    __version__: str
    from mercury_nb.contract.config import MercuryConfig
    from mercury_nb.contract.outcome import TaskOutcome
    from mercury_nb.runs.runner import run_task

__all__ = [
    "MercuryConfig",
    "TaskOutcome",
    "__version__",
    "load_ipython_extension",
    "run_task",
    "unload_ipython_extension",
]

_LAZY = {
    "run_task": "mercury_nb.runs.runner",
    "TaskOutcome": "mercury_nb.contract.outcome",
    "MercuryConfig": "mercury_nb.contract.config",
}


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext mercury_nb``: register the ``%%mercury`` magic; nothing heavy is imported."""
    from mercury_nb.kernel.magics import register

    register(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext mercury_nb``: remove the magic and its input transformer."""
    from mercury_nb.kernel.magics import unregister

    unregister(ipython)


def _installed_version() -> str:
    """The installed distribution's version; its one source is ``labextension/package.json``."""
    from importlib.metadata import version

    return version("mercury-nb")


def __getattr__(name: str) -> Any:
    if name == "__version__":
        value: Any = _installed_version()
        globals()[name] = value
        return value
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mercury_nb' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | {"__version__"})
