"""Streams one model step and assembles it; a broken stream becomes an interrupted reply,
an empty one a failed step."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from mercury_nb.agent.events import EventSink, TextDelta
from mercury_nb.agent.stall_watch import AttemptStalled, StallWatch
from mercury_nb.contract.escalation.provider_policy import EMPTY_REPLY_KIND, EMPTY_REPLY_MESSAGE
from mercury_nb.contract.recovery.stall_watchdog import IDLE_ACTIVITY
from mercury_nb.contract.text_cut import clip
from mercury_nb.contract.turns.stream_assembly import (
    StepReply,
    StreamAssembly,
    is_empty_reply,
    produced_nothing,
)
from mercury_nb.contract.untrusted import clean
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


@dataclass
class PartialStep:
    """What a stream has assembled so far, readable after it was cancelled (a stall)."""

    assembly: StreamAssembly = field(default_factory=StreamAssembly)


async def stream_step(
    model: ChatModel,
    request: ModelRequest,
    on_event: EventSink,
    step: int,
    on_activity: Callable[[], None] | None = None,
    partial: PartialStep | None = None,
    on_usage: Callable[[str, int, int], None] | None = None,
) -> StepReply:
    """Run one streamed request. A ProviderError before any chunk raises
    :class:`StepFailedBeforeOutput`; any failure after output is an interrupted reply (its
    partial text is never delivered as an answer). A stream that produced neither text nor
    a tool call, and a complete reply with only whitespace and no tool call, are failed
    steps too (:class:`StepFailedBeforeOutput`, kind ``interrupted`` or ``empty-reply``):
    nothing to keep, the same request is retried or the next provider asked.
    ``on_activity`` is called for every chunk; ``partial`` follows the assembly;
    ``on_usage(model, prompt, completion)`` gets the token usage the provider reports."""
    assembly = StreamAssembly()
    try:
        async for chunk in model.stream(request):
            if on_activity is not None:
                on_activity()
            match chunk:
                case TextChunk(text=text):
                    if text:
                        assembly = assembly.add_text(text)
                        on_event(TextDelta(clean(text)))
                case ToolCallChunk(index=index, id=call_id, name=name, arguments=arguments):
                    assembly = assembly.add_tool_delta(index, call_id, name, arguments)
                case FinishChunk(reason=reason):
                    assembly = assembly.add_finish(reason)
                case UsageChunk(prompt_tokens=prompt, completion_tokens=completion):
                    if on_usage is not None:
                        on_usage(model.name, prompt, completion)
            if partial is not None:
                partial.assembly = assembly
    except asyncio.CancelledError:
        raise
    except ProviderError as error:
        if assembly.chunks == 0:
            raise StepFailedBeforeOutput(error) from error
        # its own words (a cut names its bound), not "ProviderError: provider: kind: ..."
        return _usable(assembly.reply(error=error.message or str(error), step=step), model.name)
    except Exception as error:  # any mid-stream failure is an interruption, never success
        if assembly.chunks == 0:
            raise StepFailedBeforeOutput(
                ProviderError(provider=model.name, message=clip(clean(str(error)), 300, mark=""),
                              kind=type(error).__name__)
            ) from error
        return _usable(assembly.reply(error=error, step=step), model.name)
    return _usable(assembly.reply(step=step), model.name)


def _usable(reply: StepReply, provider: str) -> StepReply:
    """``reply``, unless it carries nothing to act on: then the step failed."""
    if is_empty_reply(reply):
        raise StepFailedBeforeOutput(
            ProviderError(provider=provider, message=EMPTY_REPLY_MESSAGE, kind=EMPTY_REPLY_KIND)
        )
    if produced_nothing(reply):
        message = reply.error or "the stream ended without output or a finish reason"
        raise StepFailedBeforeOutput(
            ProviderError(provider=provider, message=clip(message, 300, mark=""),
                          kind="interrupted")
        )
    return reply


async def watched_step(
    model: ChatModel,
    request: ModelRequest,
    on_event: EventSink,
    step: int,
    watch: StallWatch,
    activity: str | None = None,
    on_usage: Callable[[str, int, int], None] | None = None,
) -> StepReply:
    """:func:`stream_step` under the stall watchdog (``activity``: what the pulse says it
    waits for). A hard stall cancels the stream and raises :class:`AttemptStalled`
    carrying what had been assembled."""
    partial = PartialStep()
    try:
        async with watch.request(activity or IDLE_ACTIVITY):
            return await stream_step(model, request, on_event, step, watch.on_chunk, partial,
                                     on_usage)
    except AttemptStalled as stalled:
        stalled.assembly = partial.assembly
        raise
