"""A server extension for the benchmarks only: ticks on the server's event loop, keeps its lag.

Loaded by ``bench/bench_server_tasks.py`` into the ``jupyter lab`` it starts (through a
``--config`` file that puts ``bench/`` on ``sys.path``). Every :data:`TICK_S` a callback
scheduled with ``loop.call_later`` notes how late it ran; ``GET /bench-loop-lag`` answers the
worst lag, the count of ticks and of lags over 50 ms since the last ``?reset=1``.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from tornado import ioloop, web

TICK_S = 0.01
BLOCKED_S = 0.05
_lags: list[float] = []


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    return [{"module": "loop_lag_probe"}]


def _tick(loop: asyncio.AbstractEventLoop, due: float) -> None:
    now = time.monotonic()
    _lags.append(max(0.0, now - due))
    loop.call_later(TICK_S, _tick, loop, now + TICK_S)


def _start() -> None:
    loop = asyncio.get_running_loop()
    loop.call_later(TICK_S, _tick, loop, time.monotonic() + TICK_S)


class LagHandler(web.RequestHandler):
    """The lag seen since the last reset (milliseconds); ``?reset=1`` starts a new window."""

    def get(self) -> None:
        lags = sorted(_lags)
        reply = {"ticks": len(lags), "max_ms": 1000 * lags[-1] if lags else None,
                 "p99_ms": 1000 * lags[int(0.99 * (len(lags) - 1))] if lags else None,
                 "over_50ms": sum(lag > BLOCKED_S for lag in lags)}
        if self.get_argument("reset", None):
            _lags.clear()
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(reply))


def _load_jupyter_server_extension(serverapp: Any) -> None:
    base = serverapp.web_app.settings.get("base_url", "/")
    serverapp.web_app.add_handlers(".*$", [(f"{base}bench-loop-lag", LagHandler)])
    ioloop.IOLoop.current().add_callback(_start)  # the loop the server is about to run
