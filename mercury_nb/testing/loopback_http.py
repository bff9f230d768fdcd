"""The HTTP side of the loopback server: OpenAI chat-completions over SSE, faults on the wire."""

from __future__ import annotations

import contextlib
import itertools
import json
import socket
import sys
import threading
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from mercury_nb.testing.script import (
    GATE_POLL_S,
    DropMidStream,
    Endless,
    HttpError,
    MalformedChunk,
    NoFinish,
    ScriptStep,
    Stall,
    Trickle,
    Turn,
    content_chunks,
    fault_position,
    request_from_openai_body,
    resolve_turn,
)
from mercury_nb.testing.wire_format import (
    completion_body,
    error_body,
    sse_chunk,
    usage_of,
)


class ScriptHost(Protocol):
    """What the HTTP side uses of the loopback server: its script, errors and stop signal."""

    errors: list[str]
    stopping: threading.Event
    routes: dict[str, Any]

    def record_get(self, path: str) -> None:
        ...

    def record_post(self, path: str, headers: dict[str, str]) -> None:
        ...

    def take_turn(self, body: dict[str, Any], arrived: float) -> tuple[ScriptStep, int] | None:
        ...

    def record_reply_end(self, ended: float) -> None:
        ...


CHAT_PATHS = frozenset({"/v1/chat/completions", "/chat/completions"})
EXHAUSTED_STATUS = 400
"""Status answered when the script is used up: not retried, so a mis-scripted test fails fast."""


class LoopbackHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128
    """The listen backlog: with socketserver's 5, twenty clients connecting at once overflow
    it and the kernel drops their SYNs, retried a second later (a 1 s gap no client made)."""
    loopback: ScriptHost

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Record instead of printing a traceback to stderr (a test's or a cell's output)."""
        self.loopback.errors.append(repr(sys.exc_info()[1]))


class _Dropped(Exception):
    """The scripted fault (or the server stopping) cut this response."""


class ChatCompletionsHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: LoopbackHTTPServer
    timeout = 30
    trickle_s: float | None = None
    """Set (by a :class:`Trickle` fault): every byte from now on waits this long."""

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: nothing the server logs may land in a test's or a notebook's output."""

    def do_GET(self) -> None:
        """The server's ``routes`` (``/props``, ``/v1/models``...) as JSON; else 404."""
        loopback = self.server.loopback
        path = self.path.split("?")[0]
        loopback.record_get(path)
        if path in loopback.routes:
            self._json(200, loopback.routes[path])
            return
        self._json(404, error_body(404, f"no route for GET {self.path}"))

    def do_POST(self) -> None:
        arrived = time.monotonic()
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        self.server.loopback.record_post(self.path, dict(self.headers.items()))
        if self.path.split("?")[0] not in CHAT_PATHS:
            self._json(404, error_body(404, f"no route for POST {self.path}"))
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._json(400, error_body(400, "request body is not JSON"))
            return
        loopback = self.server.loopback
        picked = loopback.take_turn(body, arrived)
        if picked is None:
            message = f"loopback script exhausted for model {body.get('model')!r}"
            self._json(EXHAUSTED_STATUS, error_body(EXHAUSTED_STATUS, message))
            return
        step, number = picked
        try:
            turn = resolve_turn(step, request_from_openai_body(body))
        except Exception as error:  # a broken callable turn: report it, keep serving
            loopback.errors.append(repr(error))
            self._json(500, error_body(500, f"loopback script error: {error!r}"))
            return
        try:
            if body.get("stream"):
                self._stream(turn, number, body)
            else:
                self._complete(turn, number, body)
            loopback.record_reply_end(time.monotonic())
        except (_Dropped, OSError):
            self._drop()

    # --- responses ---------------------------------------------------------------

    def _json(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def _http_error(self, fault: HttpError) -> None:
        headers = {}
        if fault.retry_after is not None:
            seconds = fault.retry_after
            headers["Retry-After"] = str(int(seconds)) if seconds == int(seconds) else str(seconds)
        body = error_body(fault.status, fault.message, fault.code, fault.extra)
        self._json(fault.status, body, headers)

    def _complete(self, turn: Turn, number: int, body: dict[str, Any]) -> None:
        match turn.fault:
            case HttpError() as fault:
                self._http_error(fault)
                return
            case DropMidStream():
                raise _Dropped
            case Stall(seconds=seconds) as stall:
                self._stall(stall, seconds)
            case _:
                pass
        payload = completion_body(turn, number, str(body.get("model")), body)
        data = json.dumps(payload).encode()
        if isinstance(turn.fault, MalformedChunk):
            data = data[: len(data) // 2]
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def _stream(self, turn: Turn, number: int, body: dict[str, Any]) -> None:
        if isinstance(turn.fault, HttpError):
            self._http_error(turn.fault)
            return
        model = str(body.get("model"))
        if isinstance(turn.fault, Trickle) and turn.fault.headers:
            self.trickle_s = turn.fault.byte_every_s
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        self._event(sse_chunk(number, model, {"role": "assistant", "content": ""}))
        chunks = content_chunks(turn, number)
        strike = fault_position(turn, len(chunks))
        for position in range(len(chunks) + 1):
            if position == strike:
                self._strike(turn, number, model)
            if position < len(chunks):
                self._event(sse_chunk(number, model, chunks[position]))
        reason = turn.resolved_finish_reason
        if reason is not None:
            self._event(sse_chunk(number, model, {}, finish_reason=reason))
        options = body.get("stream_options") or {}
        if isinstance(options, dict) and options.get("include_usage"):
            self._event(json.dumps(usage_of(turn, number, model, body)))
        if not (isinstance(turn.fault, NoFinish) and not turn.fault.send_done):
            self._event("[DONE]")
        self._write_piece(b"")  # the zero-length chunk: a clean end of the body

    def _strike(self, turn: Turn, number: int, model: str) -> None:
        match turn.fault:
            case DropMidStream():
                raise _Dropped
            case MalformedChunk():
                self._event('{"id": "chatcmpl-broken", "choices": [{"delta": {"content": "')
            case Stall(seconds=seconds) as stall:
                self._stall(stall, seconds)
            case Trickle(byte_every_s=seconds):
                self.trickle_s = seconds
            case Endless(piece=piece, every_s=seconds):
                for n in itertools.count(1):  # until the client hangs up or the server stops
                    self._event(sse_chunk(number, model, {"content": f"{piece}{n} "}))
                    self._pause(seconds)
            case _:
                pass

    def _stall(self, stall: Stall, seconds: float) -> None:
        """Silent for ``seconds``, or until the stall's gate file appears."""
        deadline = time.monotonic() + seconds
        while not stall.ended() and (left := deadline - time.monotonic()) > 0:
            self._pause(min(GATE_POLL_S, left))

    def _pause(self, seconds: float) -> None:
        if self.server.loopback.stopping.wait(seconds):
            raise _Dropped  # the server is stopping: never hold shutdown up

    def _event(self, data: str) -> None:
        self._write_piece(f"data: {data}\n\n".encode())

    def _write_piece(self, data: bytes) -> None:
        self._send(f"{len(data):X}\r\n".encode() + data + b"\r\n")

    def flush_headers(self) -> None:
        """The status line and headers, through :meth:`_send` (so they can trickle)."""
        buffered: list[bytes] = getattr(self, "_headers_buffer", [])
        if buffered:
            self._send(b"".join(buffered))
            buffered.clear()

    def _send(self, data: bytes) -> None:
        """Write and flush, one byte per :attr:`trickle_s` once a trickle began."""
        if self.trickle_s is None:
            self.wfile.write(data)
            self.wfile.flush()
            return
        for position in range(len(data)):
            self.wfile.write(data[position : position + 1])
            self.wfile.flush()
            self._pause(self.trickle_s)

    def _drop(self) -> None:
        """Cut the connection abruptly: no terminating chunk, no more bytes."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)
