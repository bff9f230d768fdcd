"""Imports litellm lazily, once, off the event loop, with everything it prints or logs silenced."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from types import ModuleType
from typing import Any

from mercury_nb.transport.thread_streams import ThreadRouted

LITELLM_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy")
"""litellm's loggers; their handlers would write to stderr, which is the notebook cell."""

_import_lock = threading.Lock()
_module: ModuleType | None = None


def _silence(litellm: Any) -> None:
    litellm.suppress_debug_info = True
    if hasattr(litellm, "set_verbose"):
        litellm.set_verbose = False
    for name in LITELLM_LOGGERS:
        logger = logging.getLogger(name)
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
        logger.addHandler(logging.NullHandler())
        logger.propagate = False
        logger.setLevel(logging.CRITICAL)


def _import_now() -> ModuleType:
    global _module
    with _import_lock:
        if _module is not None:
            return _module
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        me = threading.get_ident()
        saved_out, saved_err = sys.stdout, sys.stderr
        muted_out = ThreadRouted(saved_out, me, len)  # the importing thread's: dropped
        muted_err = ThreadRouted(saved_err, me, len)
        sys.stdout, sys.stderr = muted_out, muted_err
        try:
            import litellm

            _silence(litellm)
        finally:
            # restore only what is still ours: someone may have swapped them meanwhile
            if sys.stdout is muted_out:
                sys.stdout = saved_out
            if sys.stderr is muted_err:
                sys.stderr = saved_err
        _module = litellm
        return litellm


def import_litellm() -> ModuleType:
    """Import (once) and return litellm, blocking. For threads, CLIs and test fixtures."""
    if _module is not None:
        return _module
    return _import_now()


async def load_litellm() -> ModuleType:
    """Import (once) and return litellm in a worker thread, so the event loop keeps running.

    Concurrent callers share one import. ``LITELLM_LOCAL_MODEL_COST_MAP=True`` is set first
    (no network fetch at import), and litellm's prints and logs are kept out of the cell."""
    if _module is not None:
        return _module
    return await asyncio.to_thread(_import_now)


def is_litellm_loaded() -> bool:
    """Whether litellm is imported in this process (by this loader or anyone else)."""
    return _module is not None or "litellm" in sys.modules
