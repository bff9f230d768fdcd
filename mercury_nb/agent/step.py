"""Streams one model step and assembles it; a broken stream becomes an interrupted reply."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from mercury_nb.agent.events import EventSink, TextDelta
from mercury_nb.contract.stream_assembly import StepReply, StreamAssembly
from mercury_nb.transport.protocol import (
    ChatModel,
    FinishChunk,
    ModelRequest,
    ProviderError,
    TextChunk,
    ToolCallChunk,
    UsageChunk,
)


class StepFailedBeforeOutput(Exception):
    """The provider failed before streaming anything; carries the ProviderError."""

    def __init__(self, error: ProviderError) -> None:
        super().__init__(str(error))
        self.error = error


async def stream_step(
    model: ChatModel,
    request: ModelRequest,
    on_event: EventSink,
    step: int,
    on_activity: Callable[[], None] | None = None,
) -> StepReply:
    """Run one streamed request. A ProviderError before any chunk raises
    :class:`StepFailedBeforeOutput`; any failure after output is kept as an interrupted reply
    (partial text preserved, never delivered as an answer)."""
    assembly = StreamAssembly()
    try:
        async for chunk in model.stream(request):
            if on_activity is not None:
                on_activity()
            match chunk:
                case TextChunk(text=text):
                    if text:
                        assembly = assembly.add_text(text)
                        on_event(TextDelta(text))
                case ToolCallChunk(index=index, id=call_id, name=name, arguments=arguments):
                    assembly = assembly.add_tool_delta(index, call_id, name, arguments)
                case FinishChunk(reason=reason):
                    assembly = assembly.add_finish(reason)
                case UsageChunk():
                    pass
    except asyncio.CancelledError:
        raise
    except ProviderError as error:
        if assembly.chunks == 0:
            raise StepFailedBeforeOutput(error) from error
        return assembly.reply(error=error, step=step)
    except Exception as error:  # any mid-stream failure is an interruption, never success
        if assembly.chunks == 0:
            raise StepFailedBeforeOutput(
                ProviderError(provider=model.name, message=str(error)[:300],
                              kind=type(error).__name__)
            ) from error
        return assembly.reply(error=error, step=step)
    return assembly.reply(step=step)
