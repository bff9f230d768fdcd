"""OpenAI chat-completions wire bodies for the loopback server: stream chunks, replies, errors."""

from __future__ import annotations

import json
import time
from typing import Any

from mercury_nb.testing.script import ContentChunk, Turn, tool_call_id
from mercury_nb.transport.protocol import TextChunk

_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", None),
    404: ("invalid_request_error", "model_not_found"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
}


def _completion_id(number: int) -> str:
    return f"chatcmpl-loopback-{number}"


def delta_of(chunk: ContentChunk) -> dict[str, Any]:
    """The ``delta`` object that carries one content chunk."""
    if isinstance(chunk, TextChunk):
        return {"content": chunk.text}
    call: dict[str, Any] = {"index": chunk.index}
    if chunk.name is not None:
        call.update(id=chunk.id, type="function")
        call["function"] = {"name": chunk.name, "arguments": chunk.arguments}
    else:
        call["function"] = {"arguments": chunk.arguments}
    return {"tool_calls": [call]}


def sse_chunk(
    number: int,
    model: str,
    content: ContentChunk | dict[str, Any],
    finish_reason: str | None = None,
) -> str:
    """One ``chat.completion.chunk`` as JSON text (the part after ``data: ``)."""
    delta = content if isinstance(content, dict) else delta_of(content)
    return json.dumps(
        {
            "id": _completion_id(number),
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": None,
            "choices": [
                {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
            ],
        }
    )


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _usage(turn: Turn, body: dict[str, Any]) -> dict[str, int]:
    if turn.usage is not None:
        recorded_prompt, recorded_completion = turn.usage
        return {"prompt_tokens": recorded_prompt, "completion_tokens": recorded_completion,
                "total_tokens": recorded_prompt + recorded_completion}
    prompt = _estimate_tokens(json.dumps(body.get("messages") or []))
    completion = _estimate_tokens(
        turn.text + "".join(spec.name + spec.arguments_json for spec in turn.tool_calls)
    )
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def usage_of(turn: Turn, number: int, model: str, body: dict[str, Any]) -> dict[str, Any]:
    """The usage-only chunk sent last when the request asked ``stream_options.include_usage``."""
    return {
        "id": _completion_id(number),
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [],
        "usage": _usage(turn, body),
    }


def completion_body(turn: Turn, number: int, model: str, body: dict[str, Any]) -> dict[str, Any]:
    """A whole non-streamed ``chat.completion`` for the turn."""
    message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
    if turn.tool_calls:
        message["tool_calls"] = [
            {
                "id": tool_call_id(number, index, spec),
                "type": "function",
                "function": {"name": spec.name, "arguments": spec.arguments_json},
            }
            for index, spec in enumerate(turn.tool_calls)
        ]
    return {
        "id": _completion_id(number),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": turn.resolved_finish_reason}],
        "usage": _usage(turn, body),
    }


def error_body(status: int, message: str, code: str | None = None,
               extra: tuple[tuple[str, Any], ...] = ()) -> dict[str, Any]:
    """An OpenAI-style error object (``code`` and ``extra`` fields override the defaults)."""
    kind, usual = _ERROR_TYPES.get(status, ("server_error" if status >= 500 else "api_error", None))
    error = {"message": message, "type": kind, "param": None, "code": code or usual}
    error.update(dict(extra))
    return {"error": error}
