"""The lazy litellm loader: no import until asked, one shared import, nothing printed or logged."""

from __future__ import annotations

import asyncio
import io
import logging
import subprocess
import sys
import textwrap
import threading
from typing import Any

from mercury_nb.transport import litellm_loader
from mercury_nb.transport.thread_streams import ThreadRouted


def test_importing_the_transport_does_not_import_litellm_and_loading_prints_nothing() -> None:
    code = textwrap.dedent(
        """
        import asyncio, sys
        import mercury_nb.transport.litellm_model, mercury_nb.transport.factory
        from mercury_nb.contract.config import MercuryConfig
        from mercury_nb.transport.factory import resolve_model
        from mercury_nb.transport.litellm_loader import is_litellm_loaded, load_litellm
        resolve_model("anthropic/x", MercuryConfig(api_key="sk-test-key"))
        before = "litellm" in sys.modules or is_litellm_loaded()
        async def main():
            first, second = await asyncio.gather(load_litellm(), load_litellm())
            return first is second
        same = asyncio.run(main())
        print(f"before={before} same={same} after={is_litellm_loaded()}")
        """
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp"}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )
    assert result.stdout == "before=False same=True after=True\n"
    assert result.stderr == ""


def test_litellm_is_configured_quietly(litellm_module: Any) -> None:
    assert litellm_module.suppress_debug_info is True
    assert not getattr(litellm_module, "set_verbose", False)
    for name in litellm_loader.LITELLM_LOGGERS:
        logger = logging.getLogger(name)
        assert logger.propagate is False
        writers = [h for h in logger.handlers if isinstance(h, logging.StreamHandler)]
        assert not [h for h in writers if type(h).__name__ != "LogCaptureHandler"]


def test_muting_only_drops_the_importing_threads_writes() -> None:
    target = io.StringIO()
    muted = ThreadRouted(target, threading.get_ident(), len)  # as the loader mutes
    muted.write("from the importing thread\n")
    other = threading.Thread(target=lambda: muted.write("from another thread\n"))
    other.start()
    other.join()
    assert target.getvalue() == "from another thread\n"


async def test_load_litellm_returns_the_shared_module(litellm_module: Any) -> None:
    loaded = await asyncio.gather(*(litellm_loader.load_litellm() for _ in range(3)))
    assert all(module is litellm_module for module in loaded)
    assert litellm_loader.is_litellm_loaded()
