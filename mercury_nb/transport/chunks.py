"""Maps one OpenAI-shaped streaming chunk (the openai SDK's or litellm's) to our chunks."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from mercury_nb.transport.protocol import (
    FinishChunk,
    StreamChunk,
    TextChunk,
    ToolCallChunk,
    UsageChunk,
)


def _as_sent(reason: str) -> str:
    return reason


def openai_shaped_chunks(
    raw: Any, finish: Callable[[str], str | None] = _as_sent
) -> Iterator[StreamChunk]:
    """Our chunks for one ``chat.completion.chunk``: text, tool-call pieces, the finish
    reason (through ``finish``, as sent by default), and usage (the last chunk, when
    ``include_usage`` was asked). A chunk without a finish reason yields no FinishChunk."""
    choices = getattr(raw, "choices", None) or []
    if choices:
        choice = choices[0]
        delta = getattr(choice, "delta", None)
        text = getattr(delta, "content", None)
        if text:
            yield TextChunk(str(text))
        for position, call in enumerate(getattr(delta, "tool_calls", None) or []):
            function = getattr(call, "function", None)
            index = getattr(call, "index", None)
            yield ToolCallChunk(
                index=int(index) if index is not None else position,
                id=getattr(call, "id", None) or None,
                name=getattr(function, "name", None) or None,
                arguments=getattr(function, "arguments", None) or "",
            )
        reason = getattr(choice, "finish_reason", None)
        if reason is not None:
            yield FinishChunk(finish(str(reason)))
    usage = getattr(raw, "usage", None)
    if usage is not None and getattr(usage, "prompt_tokens", None) is not None:
        yield UsageChunk(
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        )
