"""A server extension for the benchmarks only: ticks on the server's event loop, keeps its lag.

Loaded by ``bench/bench_server_tasks.py`` into the ``jupyter lab`` it starts (through a
``--config`` file that puts ``bench/`` on ``sys.path``). Every :data:`TICK_S` a callback
scheduled with ``loop.call_later`` notes how late it ran; ``GET /bench-loop-lag`` answers the
worst lag, the count of ticks and of lags over 50 ms, and the durations of the garbage
collector's full passes since the last ``?reset=1``. With ``MERCURY_BENCH_SAMPLE=1`` a thread
samples the loop thread's stack (and the other threads') every 2 ms (``?stacks=1`` answers
them); ``MERCURY_BENCH_WORKERS=N`` gives the loop a default thread pool of N workers.
"""

from __future__ import annotations

import asyncio
import collections
import gc
import json
import os
import sys
import threading
import time
from typing import Any

from tornado import ioloop, web

TICK_S = 0.01
BLOCKED_S = 0.05
_lags: list[float] = []
SAMPLE_S = 0.002
_busy: collections.Counter[str] = collections.Counter()
"""With ``MERCURY_BENCH_SAMPLE=1``: samples of the loop thread's stack while it is not waiting
in its selector, keyed by the innermost frame and the nearest mercury_nb / jupyter frame."""
_blocked: collections.Counter[str] = collections.Counter()
"""Stacks sampled while a tick was over 40 ms late (what held the loop)."""
_last_tick = [time.monotonic()]
_threads: collections.Counter[str] = collections.Counter()
"""Samples of the process's other threads while they run Python, by thread name and frame."""


def _where(frame: object) -> tuple[str, str]:
    leaf, ours = "", ""
    chain = []
    while frame is not None:
        code = frame.f_code  # type: ignore[attr-defined]
        chain.append(f"{code.co_filename.rsplit('/', 2)[-1]}:{code.co_name}")
        if not ours and ("mercury_nb" in code.co_filename):
            ours = f"{code.co_filename.split('mercury_nb/')[-1]}:{frame.f_lineno} {code.co_name}"  # type: ignore[attr-defined]
        frame = frame.f_back  # type: ignore[attr-defined]
    leaf = " < ".join(chain[:4])
    return leaf, ours


WAITS = ("selectors.py:select", "threading.py:wait", "queue.py:get", "time.sleep",
         "threading.py:_wait_for_tstate_lock", "thread.py:_worker", "writer.py:_work")
"""Innermost frames of a thread waiting in C (a pool worker's or the ledger writer's queue)."""


def _sample(thread: int) -> None:
    names = {}
    while True:
        time.sleep(SAMPLE_S)
        frames = sys._current_frames()
        frame = frames.get(thread)
        if frame is None:
            return
        for other, top in frames.items():  # other threads running Python (not waiting)
            if other in (thread, threading.get_ident()):
                continue
            if other not in names:
                names = {t.ident: t.name for t in threading.enumerate()}
            leaf, ours = _where(top)
            if not any(wait in leaf.split(" < ")[0] for wait in WAITS):
                _threads[f"{names.get(other, other)}: {leaf} || {ours}"] += 1
        leaf, ours = _where(frame)
        if "selectors.py:select" in leaf:
            continue
        _busy[f"{leaf} || {ours}"] += 1
        if time.monotonic() - _last_tick[0] > 0.04:
            _blocked[f"{leaf} || {ours}"] += 1


_gc: list[float] = []
"""Durations (s) of the garbage collector's full (generation 2) passes, in any thread."""
_gc_began = [0.0]


def _gc_timer(phase: str, info: dict[str, Any]) -> None:
    if info.get("generation") != 2:
        return
    if phase == "start":
        _gc_began[0] = time.monotonic()
    else:
        _gc.append(time.monotonic() - _gc_began[0])


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    return [{"module": "loop_lag_probe"}]


def _tick(loop: asyncio.AbstractEventLoop, due: float) -> None:
    now = _last_tick[0] = time.monotonic()
    _lags.append(max(0.0, now - due))
    loop.call_later(TICK_S, _tick, loop, now + TICK_S)


def _start() -> None:
    loop = asyncio.get_running_loop()
    loop.call_later(TICK_S, _tick, loop, time.monotonic() + TICK_S)
    gc.callbacks.append(_gc_timer)
    if os.environ.get("MERCURY_BENCH_WORKERS"):  # an experiment: a larger default thread pool
        from concurrent.futures import ThreadPoolExecutor

        loop.set_default_executor(ThreadPoolExecutor(int(os.environ["MERCURY_BENCH_WORKERS"])))
    if os.environ.get("MERCURY_BENCH_SAMPLE"):
        threading.Thread(target=_sample, args=(threading.get_ident(),), daemon=True).start()


class LagHandler(web.RequestHandler):
    """The lag seen since the last reset (milliseconds); ``?reset=1`` starts a new window."""

    def get(self) -> None:
        lags = sorted(_lags)
        reply = {"ticks": len(lags), "max_ms": 1000 * lags[-1] if lags else None,
                 "p99_ms": 1000 * lags[int(0.99 * (len(lags) - 1))] if lags else None,
                 "over_50ms": sum(lag > BLOCKED_S for lag in lags),
                 "full_gc_ms": [round(1000 * took, 1) for took in _gc]}
        if self.get_argument("stacks", None):
            reply["busy"] = _busy.most_common(25)
            reply["blocked"] = _blocked.most_common(15)
            reply["threads"] = _threads.most_common(12)
            reply["samples"] = {"busy": sum(_busy.values()), "threads": sum(_threads.values())}
        if self.get_argument("reset", None):
            _lags.clear()
            _gc.clear()
            _busy.clear()
            _blocked.clear()
            _threads.clear()
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(reply))


def _load_jupyter_server_extension(serverapp: Any) -> None:
    base = serverapp.web_app.settings.get("base_url", "/")
    serverapp.web_app.add_handlers(".*$", [(f"{base}bench-loop-lag", LagHandler)])
    ioloop.IOLoop.current().add_callback(_start)  # the loop the server is about to run
