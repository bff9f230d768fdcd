"""Model names that resolve to in-process models: registered ones (the fakes register here),
else the shipped demos (:mod:`~mercury_nb.transport.demo_models`)."""

from __future__ import annotations

import threading

from mercury_nb.transport.demo_models import DEMOS
from mercury_nb.transport.protocol import ChatModel

SCRIPTED_PREFIX = "scripted/"
"""Names under this prefix are registered models, never litellm's."""

_models: dict[str, ChatModel] = {}
_lock = threading.Lock()


def register_model(name: str, model: ChatModel) -> None:
    """Resolve ``name`` to ``model`` from now on (replaces an earlier one)."""
    with _lock:
        _models[name] = model


def unregister_model(name: str) -> None:
    """Forget ``name`` (no error if it was not registered)."""
    with _lock:
        _models.pop(name, None)


def registered_model(name: str) -> ChatModel | None:
    """The model registered as ``name``, else the shipped demo of that name, else None."""
    with _lock:
        found = _models.get(name)
    if found is not None:
        return found
    demo: ChatModel | None = DEMOS.get(name)
    return demo


def registered_names(prefix: str = SCRIPTED_PREFIX) -> list[str]:
    """The registered names under ``prefix`` (the scripted models by default), sorted."""
    with _lock:
        return sorted(name for name in _models if name.startswith(prefix))


def lookup_scripted(name: str) -> ChatModel:
    """The model registered as ``name`` (a ``scripted/`` name); ``LookupError`` if none."""
    model = registered_model(name)
    if model is None:
        with _lock:
            known = sorted(key for key in _models if key.startswith(SCRIPTED_PREFIX))
        raise LookupError(
            f"no scripted model named {name!r} is registered "
            f"(demos: {', '.join(sorted(DEMOS))}; registered: {', '.join(known) or 'none'}); "
            "use mercury_nb.testing.register_scripted_model()"
        )
    return model
