"""Streams one chat-completions POST over plain HTTP (httpx2): a client per event loop and
endpoint, the server-sent events parsed into JSON chunks, failures as small typed errors."""

from __future__ import annotations

import asyncio
import contextlib
import json
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping
from typing import Any

_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[Any, ...], Any]] = (
    weakref.WeakKeyDictionary()
)
"""One httpx2 client per event loop and endpoint: its connection pool is bound to the loop."""
_tls: list[Any] = []
"""The TLS context of :func:`tls_context`, once made."""


class EndpointStatusError(Exception):
    """The endpoint answered with an HTTP error: its status, its parsed JSON error body (the
    ``error`` object when there is one) or its text, and its response headers."""

    def __init__(self, status_code: int, body: Any, headers: Mapping[str, str]) -> None:
        super().__init__(f"Error code: {status_code} - {body}")
        self.status_code = status_code
        self.body = body
        self.headers = dict(headers)


class EndpointConnectionError(ConnectionError):
    """The connection failed or broke (the kind ``connection``, read from the class)."""


class EndpointTimeoutError(TimeoutError):
    """A connect or read timeout (the kind ``timeout``, read from the class)."""


class StreamedErrorEvent(Exception):
    """An ``error`` object the endpoint sent inside a 200 stream."""

    def __init__(self, body: Any) -> None:
        message = body.get("message") if isinstance(body, Mapping) else None
        super().__init__(message if isinstance(message, str) and message
                         else "An error occurred during streaming")
        self.body = body


def tls_context() -> Any:
    """The one TLS context every client shares: loading the CA bundle holds the GIL for tens
    of milliseconds, so it is done once per process."""
    if not _tls:
        import httpx2

        _tls.append(httpx2.create_ssl_context())
    return _tls[0]


def http_client(base_url: str | None, bearer: str, api_key: str | None, timeout_s: float) -> Any:
    """The running loop's client for this endpoint (made at first use; importing httpx2
    here keeps it off every path that never sends a request)."""
    import httpx2

    per_loop = _clients.setdefault(asyncio.get_running_loop(), {})
    key = (base_url, api_key, timeout_s)
    client = per_loop.get(key)
    if client is None:
        headers = {"Authorization": f"Bearer {bearer}", "Content-Type": "application/json",
                   "Accept": "application/json"}
        client = httpx2.AsyncClient(timeout=httpx2.Timeout(timeout_s), verify=tls_context(),
                                    headers=headers)
        per_loop[key] = client
    return client


class SseEvents:
    """Server-sent events, line by line: ``feed`` returns an event's data when a blank line
    ends an event that carried ``data:`` (its lines joined by newlines), else None. Comments
    (keep-alives) and other fields are skipped; an unfinished event at the end is dropped."""

    def __init__(self) -> None:
        self._data: list[str] = []

    def feed(self, line: str) -> str | None:
        if not line:
            data, self._data = self._data, []
            return "\n".join(data) if data else None
        if line.startswith(":"):
            return None
        field, _, value = line.partition(":")
        if field == "data":
            self._data.append(value[1:] if value.startswith(" ") else value)
        return None


class EventStream:
    """The JSON chunks of one streamed response, up to ``[DONE]`` or the end of the body;
    a garbled chunk raises ``json.JSONDecodeError`` (the kind ``malformed``)."""

    def __init__(self, response: Any, errors: Any) -> None:
        self.response = response
        self._errors = errors
        self._chunks = self._read()

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._chunks

    async def aclose(self) -> None:
        await self._chunks.aclose()
        await self.response.aclose()

    async def _read(self) -> AsyncGenerator[Any, None]:
        events = SseEvents()
        lines = self._lines()
        try:
            async for line in lines:
                data = events.feed(line)
                if data is None:
                    continue
                if data.startswith("[DONE]"):
                    if self.response.http_version == "HTTP/1.1":
                        async for _ in lines:  # read to the end: the connection is reused
                            pass
                    return
                chunk = json.loads(data)
                if isinstance(chunk, Mapping) and chunk.get("error"):
                    raise StreamedErrorEvent(chunk["error"])
                yield chunk
        finally:
            await lines.aclose()
            await self.response.aclose()

    async def _lines(self) -> AsyncGenerator[str, None]:
        with translated(self._errors):
            async for line in self.response.aiter_lines():
                yield line


@contextlib.contextmanager
def translated(errors: Any) -> Iterator[None]:
    """Re-raises httpx2's (``errors``) timeouts and transport failures as
    :class:`EndpointTimeoutError` and :class:`EndpointConnectionError` (worded as the openai
    SDK words them)."""
    try:
        yield
    except errors.TimeoutException as error:
        raise EndpointTimeoutError("Request timed out.") from error
    except errors.RequestError as error:
        raise EndpointConnectionError("Connection error.") from error


async def post_events(client: Any, url: str, body: bytes) -> EventStream:
    """POST ``body`` to ``url`` and return its event stream, or raise the endpoint's HTTP
    error as :class:`EndpointStatusError` (the response read and closed)."""
    import httpx2

    with translated(httpx2):
        response = await client.send(client.build_request("POST", url, content=body),
                                     stream=True)
    if response.status_code >= 400:
        try:
            with translated(httpx2):
                raw = await response.aread()
        finally:
            await response.aclose()
        text = raw.decode("utf-8", errors="replace")
        try:
            parsed: Any = json.loads(text)
        except ValueError:
            parsed = text
        if isinstance(parsed, Mapping):
            parsed = parsed.get("error", parsed)
        raise EndpointStatusError(response.status_code, parsed, response.headers)
    return EventStream(response, httpx2)
