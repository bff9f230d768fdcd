"""The one stream pump both transports run: raw chunks in, our chunks out, failures alike."""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable
from typing import Any

from mercury_nb.transport.protocol import ProviderError, StreamChunk, UsageChunk

EMPTY_STREAM = "the stream ended before any output and without a finish reason"

BROKEN_STREAM_KINDS = frozenset({"connection", "malformed", "error"})
"""Kinds that say only that a started response broke (a cut, a garbled chunk, an unnamed
failure): once the response has begun they are ``interrupted``. A timeout stays ``timeout``
and a kind the provider meant (``rate_limit``, ``context_window``...) stays as it is."""


async def pump(
    provider: str,
    open_stream: Callable[[], Awaitable[Any]],
    chunks_of: Callable[[Any, Any], Iterable[StreamChunk]],
    failure: Callable[[BaseException], ProviderError],
) -> AsyncGenerator[StreamChunk, None]:
    """Our chunks from one streamed request, the same way for every transport.

    ``open_stream`` starts the request and returns the SDK's async stream; ``chunks_of(stream,
    raw)`` maps one raw chunk; ``failure`` turns an exception into the transport's
    :class:`ProviderError`. Until a content chunk (anything but usage) has been yielded a
    failure raises :class:`ProviderError`: a failure to start as ``failure`` names it, one
    after the response began as :func:`started_failure` names it, and a stream that ends
    without content as :data:`EMPTY_STREAM` (``interrupted``). After content, an exception
    propagates as raised. A stream left unfinished (an error, the consumer stopping) is
    closed."""
    try:
        stream = await open_stream()
    except Exception as error:
        raise failure(error) from None
    content = False
    finished = False
    try:
        raws = stream.__aiter__()
        while True:
            try:
                raw = await raws.__anext__()
            except StopAsyncIteration:
                finished = True
                break
            except Exception as error:
                if content:
                    raise
                raise started_failure(failure(error)) from None
            for chunk in chunks_of(stream, raw):
                content = content or not isinstance(chunk, UsageChunk)
                yield chunk
        if not content:
            raise ProviderError(provider=provider, message=EMPTY_STREAM, kind="interrupted")
    finally:
        if not finished:
            await close_quietly(stream)


def started_failure(error: ProviderError) -> ProviderError:
    """``error`` as raised after the response began: no HTTP status (it was a 200), and a
    broken-stream kind (:data:`BROKEN_STREAM_KINDS`) becomes ``interrupted``."""
    kind = "interrupted" if error.kind in BROKEN_STREAM_KINDS else error.kind
    return dataclasses.replace(error, status=None, kind=kind)


async def close_quietly(stream: Any) -> None:
    """Close an SDK stream (and its HTTP connection) we stop reading early; a broken stream
    may fail to close, and its own error is the one that matters."""
    close = getattr(stream, "aclose", None) or getattr(stream, "close", None)
    if close is None:
        return
    with contextlib.suppress(Exception):
        result = close()
        if inspect.isawaitable(result):
            await result
