"""A real OpenAI-protocol streaming HTTP server on 127.0.0.1 that plays a script with faults."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any

from mercury_nb.testing.loopback_http import ChatCompletionsHandler, LoopbackHTTPServer
from mercury_nb.testing.script import OnExhausted, ScriptStep, describe_turns

_ANY_MODEL = "*"


def llama_cpp_props(
    n_ctx: int | None = 4096,
    supports_tools: bool | None = None,
    supports_tool_calls: bool | None = None,
) -> dict[str, Any]:
    """A ``routes`` entry emulating llama.cpp's ``GET /props``: the window under
    ``default_generation_settings`` and the chat template's caps (a cap left None is not
    said, as an older server leaves it out)."""
    props: dict[str, Any] = {}
    if n_ctx is not None:
        props["default_generation_settings"] = {"n_ctx": n_ctx}
    caps = {key: value for key, value in (("supports_tools", supports_tools),
                                          ("supports_tool_calls", supports_tool_calls))
            if value is not None}
    if caps:
        props["chat_template_caps"] = caps
    return {"/props": props}


class LoopbackServer:
    """OpenAI-compatible chat-completions server on 127.0.0.1 (random port), in a thread.

    ``script`` is a list of turns for every model, or a dict of lists keyed by the request's
    ``model`` field (``"openai/a"`` through litellm arrives as ``"a"``). Every request body is
    kept in :attr:`requests`, with its arrival time (``time.monotonic()``) in
    :attr:`request_times`; every POST's path and headers (any route: what a client sent
    where, its credentials included) in :attr:`posts`. ``routes`` answers GET requests with
    fixed JSON (a server's ``/props`` or ``/v1/models``); their paths are kept in
    :attr:`get_requests`.
    ``on_exhausted="repeat_last"`` answers requests beyond a model's script with its last
    turn (kept in :attr:`repeated`) instead of refusing them. ``keep_bodies=False`` keeps
    only each body's ``model`` (a benchmark's long task would otherwise keep every growing
    conversation, quadratic memory in this process), and holds the latest body until the next
    request has arrived, so that freeing a long conversation's parsed body does not delay the
    next request's arrival time; :attr:`reply_ends` has when each reply was written out in
    full.
    Use as a context manager, or :meth:`start` / :meth:`stop`.
    """

    def __init__(
        self,
        script: Sequence[ScriptStep] | Mapping[str, Sequence[ScriptStep]],
        routes: Mapping[str, Any] | None = None,
        on_exhausted: OnExhausted = "fail",
        keep_bodies: bool = True,
    ) -> None:
        if isinstance(script, Mapping):
            self._scripts = {str(k): tuple(v) for k, v in script.items()}
        else:
            self._scripts = {_ANY_MODEL: tuple(script)}
        self._used = dict.fromkeys(self._scripts, 0)
        self.routes: dict[str, Any] = dict(routes or {})
        """GET path -> JSON answered (``{"/props": {"n_ctx": 8192}}`` emulates llama.cpp)."""
        self.get_requests: list[str] = []
        self.requests: list[dict[str, Any]] = []
        self.request_times: list[float] = []
        self.reply_ends: list[float] = []
        self.keep_bodies = keep_bodies
        self._latest: dict[str, Any] | None = None
        """With ``keep_bodies=False``: the latest body, freed when the next one arrives."""
        self.posts: list[tuple[str, dict[str, str]]] = []
        self.overruns: list[dict[str, Any]] = []
        self.on_exhausted: OnExhausted = on_exhausted
        self.repeated: list[dict[str, Any]] = []
        """Request bodies beyond the script answered with the last turn (``repeat_last``)."""
        self.errors: list[str] = []
        """Exceptions raised while serving (a callable turn that failed, say)."""
        self._lock = threading.Lock()
        self.stopping = threading.Event()
        """Set while stopping: stalled responses wait on it and are cut at once."""
        self._httpd: LoopbackHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle -------------------------------------------------------------------

    def start(self) -> LoopbackServer:
        if self._httpd is not None:
            return self
        self.stopping.clear()
        httpd = LoopbackHTTPServer(("127.0.0.1", 0), ChatCompletionsHandler)
        httpd.loopback = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"mercury-loopback-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; stalled responses are cut at once. Safe to call twice."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self.stopping.set()
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the loopback server is not running")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The OpenAI base URL, ``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    # --- script -----------------------------------------------------------------------

    def record_get(self, path: str) -> None:
        """Keep the path of a GET request in :attr:`get_requests`."""
        with self._lock:
            self.get_requests.append(path)

    def record_post(self, path: str, headers: dict[str, str]) -> None:
        """Keep a POST's path and headers in :attr:`posts`."""
        with self._lock:
            self.posts.append((path, headers))

    def record_reply_end(self, ended: float) -> None:
        """Note when a reply was written out in full (``time.monotonic()``)."""
        with self._lock:
            self.reply_ends.append(ended)

    def take_turn(self, body: dict[str, Any], arrived: float) -> tuple[ScriptStep, int] | None:
        """Record a request and hand out its model's next turn (and its number), or None."""
        model = str(body.get("model"))
        key = model if model in self._scripts else _ANY_MODEL
        with self._lock:
            self.requests.append(body if self.keep_bodies else {"model": body.get("model")})
            self.request_times.append(arrived)
            if not self.keep_bodies:
                self._latest = body  # the one before is freed now, after this arrival
            steps = self._scripts.get(key)
            used = self._used.get(key, 0)
            if steps and used >= len(steps) and self.on_exhausted == "repeat_last":
                self.repeated.append(body)
                return steps[-1], len(self.requests) - 1
            if steps is None or used >= len(steps):
                self.overruns.append(body)
                return None
            self._used[key] = used + 1
            return steps[used], used

    def requests_for(self, model: str) -> list[dict[str, Any]]:
        """The request bodies whose ``model`` field is ``model``."""
        with self._lock:
            return [body for body in self.requests if body.get("model") == model]

    @property
    def remaining(self) -> int:
        """Scripted turns not played yet, over all models."""
        with self._lock:
            return sum(len(steps) - self._used[key] for key, steps in self._scripts.items())

    def assert_complete(self) -> None:
        """Raise AssertionError if turns went unused or requests came beyond the script."""
        problems = []
        with self._lock:
            for key, steps in self._scripts.items():
                used = self._used[key]
                if used < len(steps):
                    label = "" if key == _ANY_MODEL else f" for model {key!r}"
                    problems.append(
                        f"{len(steps) - used} scripted turn(s) unused{label}:\n"
                        + describe_turns(steps[used:], first_number=used + 1)
                    )
            if self.overruns:
                first = self.overruns[0]
                problems.append(
                    f"{len(self.overruns)} request(s) beyond the script, first for model "
                    f"{first.get('model')!r} with {len(first.get('messages') or [])} message(s)"
                )
            if self.errors:
                problems.append(f"errors while serving: {'; '.join(self.errors)}")
        if problems:
            raise AssertionError("LoopbackServer: " + "\n".join(problems))
