"""The script format both fakes play: turns, tool calls and faults."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final, Literal, TypeAlias

from mercury_nb.transport.protocol import ModelRequest, TextChunk, ToolCallChunk


class _Auto(Enum):
    AUTO = "auto"

    def __repr__(self) -> str:
        return "AUTO"


AUTO: Final = _Auto.AUTO
"""Default finish reason: ``"tool_calls"`` when the turn has tool calls, else ``"stop"``."""


@dataclass(frozen=True)
class ToolCallSpec:
    """One scripted tool call. ``arguments`` as a str is sent raw (it may be malformed JSON)."""

    name: str
    arguments: dict[str, Any] | str
    id: str | None = None

    @property
    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)


def call(name: str, /, **arguments: Any) -> ToolCallSpec:
    """``call("create_file", path="a.py", content="x")``: a tool call with JSON arguments."""
    return ToolCallSpec(name=name, arguments=dict(arguments))


# --- faults ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DropMidStream:
    """The connection drops after ``after_chunks`` content chunks (before the finish if the
    turn has fewer). Scripted model: raises ``ConnectionError``. Server: closes the socket
    without ending the chunked body."""

    after_chunks: int


@dataclass(frozen=True)
class NoFinish:
    """The stream ends cleanly after all content, with no finish reason.

    ``send_done=False`` (default): the server ends the body without ``data: [DONE]`` either.
    ``send_done=True``: the server still sends ``data: [DONE]``, like ``Turn(finish_reason=None)``.
    The scripted model simply stops yielding in both cases."""

    send_done: bool = False


GATE_POLL_S = 0.02
"""How often a gated :class:`Stall` looks for its gate file."""


@dataclass(frozen=True)
class Stall:
    """Go silent for ``seconds`` after ``after_chunks`` content chunks, then carry on normally.
    The server's stall is interrupted when the server stops. ``until``: a file whose
    appearance ends the stall at once (a test's gate: it lets the stream go on when it has
    seen what it waits for, never after a guessed time)."""

    seconds: float
    after_chunks: int = 0
    until: str | None = None

    def ended(self) -> bool:
        """Whether the gate file exists (never, without one)."""
        return self.until is not None and os.path.exists(self.until)


@dataclass(frozen=True)
class HttpError:
    """The request fails before any chunk with this HTTP status (and Retry-After header).
    Scripted model: raises ``ProviderError``. Server: an OpenAI-style JSON error response."""

    status: int
    retry_after: float | None = None
    message: str = "scripted provider error"
    code: str | None = None
    """The error's ``code`` (``"context_length_exceeded"``); None: the status's usual one."""
    extra: tuple[tuple[str, Any], ...] = ()
    """More fields of the server's error object (llama.cpp's ``n_ctx``, ``n_prompt_tokens``)."""


@dataclass(frozen=True)
class MalformedChunk:
    """A non-JSON SSE data line after ``after_chunks`` content chunks. Scripted model: raises
    :class:`MalformedChunkError`. Server: sends ``data: {not json`` then the rest of the turn."""

    after_chunks: int = 0


@dataclass(frozen=True)
class Trickle:
    """After ``after_chunks`` content chunks the rest of the response comes one byte every
    ``byte_every_s`` seconds: every read gets a byte in time, so no per-read timeout ends
    it, only a total deadline. ``headers``: the status line and headers trickle too (the
    response never even begins in time). Scripted model: waits ``byte_every_s`` before each
    remaining chunk. Server: interrupted when the server stops."""

    byte_every_s: float
    after_chunks: int = 0
    headers: bool = False


@dataclass(frozen=True)
class Endless:
    """After the turn's content, text chunks keep coming without end and with no finish
    reason, whatever ``max_tokens`` asked: ``piece`` and a running number (``"and again, 7 "``;
    never twice the same chunk, as a repetition detector would catch), a new chunk every
    ``every_s``, until the client hangs up or the server stops. Scripted model: forever."""

    piece: str = "and again, "
    every_s: float = 0.0


Fault: TypeAlias = (
    DropMidStream | NoFinish | Stall | HttpError | MalformedChunk | Trickle | Endless
)


class MalformedChunkError(ValueError):
    """What the scripted model raises for :class:`MalformedChunk`."""


# --- turns ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    """One scripted model reply.

    ``finish_reason``: ``AUTO`` picks ``"tool_calls"`` / ``"stop"``; ``None`` sends no finish
    reason at all; any string is sent as is (``"length"``, ``"content_filter"``, ``"other"``...).
    ``chunk_size`` splits text and tool arguments into pieces so assembly is exercised.
    """

    text: str = ""
    tool_calls: tuple[ToolCallSpec, ...] = ()
    finish_reason: str | _Auto | None = AUTO
    fault: Fault | None = None
    chunk_size: int = 16
    usage: tuple[int, int] | None = None
    """``(prompt_tokens, completion_tokens)`` to report (a recorded reply's usage); None:
    the scripted model reports none and the loopback server sends its own estimate."""

    def __post_init__(self) -> None:
        if self.chunk_size < 1:
            raise ValueError("chunk_size must be at least 1")
        if not isinstance(self.tool_calls, tuple):
            object.__setattr__(self, "tool_calls", tuple(self.tool_calls))

    @property
    def resolved_finish_reason(self) -> str | None:
        """The finish reason to send, or ``None`` for none (also under :class:`NoFinish` and
        :class:`Endless`)."""
        if isinstance(self.fault, NoFinish | Endless):
            return None
        if isinstance(self.finish_reason, _Auto):
            return "tool_calls" if self.tool_calls else "stop"
        return self.finish_reason


OnExhausted: TypeAlias = Literal["fail", "repeat_last"]
"""What a fake does when asked for more turns than scripted: ``"fail"`` (the default) refuses
the request and reports it in ``assert_complete``; ``"repeat_last"`` plays the last turn
again, as a stuck small model does, and counts it in ``repeated``."""

TurnFactory: TypeAlias = Callable[[ModelRequest], Turn]
ScriptStep: TypeAlias = Turn | TurnFactory
"""A scripted turn, or a callable answering the request it is given with a turn."""

ContentChunk: TypeAlias = TextChunk | ToolCallChunk


def resolve_turn(step: ScriptStep, request: ModelRequest) -> Turn:
    """The turn for this request: the step itself, or what the callable returns."""
    if isinstance(step, Turn):
        return step
    turn = step(request)
    if not isinstance(turn, Turn):
        raise TypeError(f"a scripted turn callable must return a Turn, got {turn!r}")
    return turn


def tool_call_id(turn_number: int, index: int, spec: ToolCallSpec) -> str:
    """The call id sent for a tool call: its own, or a deterministic ``call_<turn>_<index>``."""
    return spec.id if spec.id is not None else f"call_{turn_number}_{index}"


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def content_chunks(turn: Turn, turn_number: int = 0) -> tuple[ContentChunk, ...]:
    """The content chunks of a turn, in order; both fakes send exactly these.

    Text comes in ``chunk_size`` pieces. Each tool call's first chunk carries its id and name
    (and no arguments); its arguments follow in ``chunk_size`` pieces, OpenAI-style.
    Fault positions (``after_chunks``) count these chunks."""
    chunks: list[ContentChunk] = [TextChunk(p) for p in _pieces(turn.text, turn.chunk_size)]
    for index, spec in enumerate(turn.tool_calls):
        chunks.append(ToolCallChunk(index, tool_call_id(turn_number, index, spec), spec.name, ""))
        chunks.extend(
            ToolCallChunk(index, None, None, piece)
            for piece in _pieces(spec.arguments_json, turn.chunk_size)
        )
    return tuple(chunks)


def fault_position(turn: Turn, total: int) -> int | None:
    """After how many content chunks the turn's mid-stream fault strikes (clamped to total)."""
    match turn.fault:
        case (DropMidStream(after_chunks=n) | MalformedChunk(after_chunks=n)
              | Stall(after_chunks=n) | Trickle(after_chunks=n)):
            return min(max(n, 0), total)
        case Endless():
            return total
        case _:
            return None


def request_from_openai_body(body: dict[str, Any]) -> ModelRequest:
    """A :class:`ModelRequest` view of an OpenAI chat-completions request body."""
    raw_choice = body.get("tool_choice", "auto")
    # a dict naming one function forces a call, like "required"
    choice: Literal["auto", "required", "none"] = (
        raw_choice if raw_choice in ("auto", "required", "none") else "required"
    )
    max_tokens = body.get("max_tokens") or body.get("max_completion_tokens") or 32768
    return ModelRequest(
        messages=tuple(body.get("messages") or ()),
        tools=tuple(body.get("tools") or ()),
        tool_choice=choice,
        max_tokens=int(max_tokens),
    )


def describe_request(request: ModelRequest, limit: int = 300) -> str:
    """A short human summary of a request, for error messages of the fakes."""
    last: Any = request.messages[-1] if request.messages else None
    if isinstance(last, dict):
        content = str(last.get("content"))
        if len(content) > limit:
            content = content[:limit] + "…"
        last_text = f"{last.get('role')}: {content}"
    else:
        last_text = "(no messages)"
    names = [t.get("function", {}).get("name", "?") for t in request.tools]
    return (
        f"{len(request.messages)} message(s), last {last_text!r}; "
        f"tools={names}, tool_choice={request.tool_choice!r}"
    )


def describe_turns(turns: Sequence[ScriptStep], first_number: int) -> str:
    """One line per unused scripted turn, numbered from ``first_number``."""
    lines = []
    for n, step in enumerate(turns, start=first_number):
        name = getattr(step, "__name__", step)
        text = repr(step) if isinstance(step, Turn) else f"<callable {name!r}>"
        if len(text) > 200:
            text = text[:200] + "…"
        lines.append(f"  #{n}: {text}")
    return "\n".join(lines)
