"""Maps one OpenAI-shaped streaming chunk (parsed JSON, or litellm's objects) to our chunks."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
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


def _field(raw: Any, name: str) -> Any:
    """``raw[name]`` of a JSON object, or the attribute ``name`` of an SDK object."""
    return raw.get(name) if isinstance(raw, Mapping) else getattr(raw, name, None)


def openai_shaped_chunks(
    raw: Any, finish: Callable[[str], str | None] = _as_sent
) -> Iterator[StreamChunk]:
    """Our chunks for one ``chat.completion.chunk``: text, tool-call pieces, the finish
    reason (through ``finish``, as sent by default), and usage (the last chunk, when
    ``include_usage`` was asked). ``raw`` is a JSON object or an object with the same
    attributes (litellm's). A chunk without a finish reason yields no FinishChunk."""
    choices = _field(raw, "choices") or []
    if choices:
        choice = choices[0]
        delta = _field(choice, "delta")
        text = _field(delta, "content")
        if text:
            yield TextChunk(str(text))
        for position, call in enumerate(_field(delta, "tool_calls") or []):
            function = _field(call, "function")
            index = _field(call, "index")
            yield ToolCallChunk(
                index=int(index) if index is not None else position,
                id=_field(call, "id") or None,
                name=_field(function, "name") or None,
                arguments=_field(function, "arguments") or "",
            )
        reason = _field(choice, "finish_reason")
        if reason is not None:
            yield FinishChunk(finish(str(reason)))
    usage = _field(raw, "usage")
    if usage is not None and _field(usage, "prompt_tokens") is not None:
        yield UsageChunk(
            prompt_tokens=int(_field(usage, "prompt_tokens") or 0),
            completion_tokens=int(_field(usage, "completion_tokens") or 0),
        )
