"""The one stream pump both transports run: raw chunks in, our chunks out, failures alike."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable
from typing import Any, TypeVar

from mercury_nb.contract.turns.stream_bounds import (
    DeadlinePassed,
    StreamBounds,
    StreamCut,
    Within,
    check_stream,
    cut_kind,
    cut_message,
)
from mercury_nb.transport.protocol import (
    ProviderError,
    StreamChunk,
    TextChunk,
    ToolCallChunk,
    UsageChunk,
)

T = TypeVar("T")

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
    bounds: StreamBounds,
) -> AsyncGenerator[StreamChunk, None]:
    """Our chunks from one streamed request, the same way for every transport.

    ``open_stream`` starts the request and returns the SDK's async stream; ``chunks_of(stream,
    raw)`` maps one raw chunk; ``failure`` turns an exception into the transport's
    :class:`ProviderError`. Until a content chunk (anything but usage) has been yielded a
    failure raises :class:`ProviderError`: a failure to start as ``failure`` names it, one
    after the response began as :func:`started_failure` names it, and a stream that ends
    without content as :data:`EMPTY_STREAM` (``interrupted``). After content, an exception
    propagates as raised. A stream left unfinished (an error, the consumer stopping) is
    closed.

    ``bounds`` holds the request's total deadline and length cap (see
    :mod:`~mercury_nb.contract.turns.stream_bounds`): every wait is cut at the deadline, and
    the characters received are counted; a cut raises the ProviderError the contract names
    (``interrupted``; ``timeout`` before the response began), before or after content."""
    clock = asyncio.get_running_loop().time
    sent = clock()
    deadline = sent + bounds.deadline_s
    try:
        stream = await _until(deadline, open_stream())
    except _DeadlineHit:
        raise cut_error(provider, DeadlinePassed(bounds.deadline_s, began=False)) from None
    except Exception as error:
        raise failure(error) from None
    content = False
    finished = False
    chars = 0
    try:
        raws = stream.__aiter__()
        while True:
            try:
                raw = await _until(deadline, raws.__anext__())
            except StopAsyncIteration:
                finished = True
                break
            except _DeadlineHit:
                raise cut_error(provider, DeadlinePassed(bounds.deadline_s, began=True)) from None
            except Exception as error:
                if content:
                    raise
                raise started_failure(failure(error)) from None
            for chunk in chunks_of(stream, raw):
                chars += chars_of(chunk)
                verdict = check_stream(bounds, clock() - sent, chars)
                if not isinstance(verdict, Within):
                    raise cut_error(provider, verdict)
                content = content or not isinstance(chunk, UsageChunk)
                yield chunk
        if not content:
            raise ProviderError(provider=provider, message=EMPTY_STREAM, kind="interrupted")
    finally:
        if not finished:
            await close_quietly(stream)


class _DeadlineHit(Exception):
    """The request's total deadline passed while it waited (raised only by :func:`_until`)."""


async def _until(deadline: float, awaitable: Awaitable[T]) -> T:
    """``awaitable``'s result, or :class:`_DeadlineHit` when the loop's clock reaches
    ``deadline`` first (an SDK's own timeout, before it, passes as raised)."""
    timer = asyncio.timeout_at(deadline)
    try:
        async with timer:
            return await awaitable
    except Exception:  # TimeoutError, or what an SDK made of the cancellation
        if timer.expired():
            raise _DeadlineHit from None
        raise


def chars_of(chunk: StreamChunk) -> int:
    """Characters a chunk adds to a reply (what the length cap counts)."""
    match chunk:
        case TextChunk(text=text):
            return len(text)
        case ToolCallChunk(id=call_id, name=name, arguments=arguments):
            return len(call_id or "") + len(name or "") + len(arguments)
        case _:
            return 0


def cut_error(provider: str, cut: StreamCut) -> ProviderError:
    """The ProviderError a bounded stream raises when ``cut`` (its kind and message are the
    contract's)."""
    return ProviderError(provider=provider, message=cut_message(cut), kind=cut_kind(cut),
                         details={"cut": type(cut).__name__})


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
