"""Drains one ChatModel stream into a StepReply, the way the agent loop assembles a step."""

from __future__ import annotations

from dataclasses import dataclass

from mercury_nb.contract.turns.stream_assembly import StepReply, StreamAssembly
from mercury_nb.transport.protocol import (
    ChatModel,
    FinishChunk,
    ModelRequest,
    StreamChunk,
    TextChunk,
    ToolCallChunk,
    UsageChunk,
)


@dataclass(frozen=True)
class CollectedStream:
    """Every chunk a stream gave, the assembled reply, and the exception that ended it."""

    chunks: tuple[StreamChunk, ...]
    reply: StepReply
    error: Exception | None


def assemble(assembly: StreamAssembly, chunk: StreamChunk) -> StreamAssembly:
    """One chunk added to an assembly (usage chunks change nothing)."""
    match chunk:
        case TextChunk(text=text):
            return assembly.add_text(text)
        case ToolCallChunk(index=index, id=call_id, name=name, arguments=arguments):
            return assembly.add_tool_delta(index, call_id, name, arguments)
        case FinishChunk(reason=reason):
            return assembly.add_finish(reason)
        case UsageChunk():
            return assembly


async def collect_stream(model: ChatModel, request: ModelRequest) -> CollectedStream:
    """Stream ``request`` from ``model`` to the end; an exception is kept, not raised."""
    assembly = StreamAssembly()
    chunks: list[StreamChunk] = []
    try:
        async for chunk in model.stream(request):
            chunks.append(chunk)
            assembly = assemble(assembly, chunk)
    except Exception as error:
        return CollectedStream(tuple(chunks), assembly.reply(error=error), error)
    return CollectedStream(tuple(chunks), assembly.reply(), None)
