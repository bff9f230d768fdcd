"""The recording format of real model traffic: loading a run, and requests in its shape.

See :mod:`mercury_nb.testing.replay` for playing a recording back.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mercury_nb.testing.script import HttpError, ToolCallSpec, Turn
from mercury_nb.transport.protocol import ModelRequest

CHAT_FLAG = "--chat"
RECORDED_ROOT = "/workspace"
"""What the recordings wrote instead of the real workspace path."""


@dataclass(frozen=True)
class RequestShape:
    """What a recording keeps of one chat request, and what a replay observes of each.

    ``tool_choice`` is None when no tools were offered (the transports then send none).
    ``last_message`` is the last message as JSON text; a recording may have cut a long one,
    so compare :attr:`last` (None when cut) or the text's start."""

    tool_choice: str | None
    tools: tuple[str, ...]
    messages: int
    last_message: str
    max_tokens: int | None

    @property
    def last(self) -> dict[str, Any] | None:
        """The last message, parsed (None when the recording cut it)."""
        try:
            parsed = json.loads(self.last_message)
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict) else None

    @property
    def forced(self) -> bool:
        """The request forced a tool call (``tool_choice`` required, or one named function)."""
        return self.tool_choice not in (None, "auto", "none")


@dataclass(frozen=True)
class RecordedCall:
    """One recorded request: a GET (``get_path``) or a chat request and its answer."""

    get_path: str | None = None
    request: RequestShape | None = None
    status: int | None = None
    reply: Turn | None = None
    """The reply as a turn (an error body becomes a turn with an ``HttpError`` fault)."""


@dataclass(frozen=True)
class Recording:
    """One recorded run."""

    run: str
    server: str
    what_it_shows: str
    flags_and_task: str
    calls: tuple[RecordedCall, ...]
    outcome_then: dict[str, Any]

    @property
    def chat_calls(self) -> tuple[RecordedCall, ...]:
        return tuple(c for c in self.calls if c.request is not None)

    @property
    def turns(self) -> tuple[Turn, ...]:
        """The replies in order, as the fakes play them."""
        return tuple(c.reply for c in self.chat_calls if c.reply is not None)

    def turns_in(self, root: str | Path | None) -> tuple[Turn, ...]:
        """The replies, with tool-call path arguments that start with ``/workspace`` (the
        recording's stand-in for the workspace) moved under ``root``; None: as recorded."""
        if root is None:
            return self.turns
        return tuple(_rooted(turn, str(root)) for turn in self.turns)

    @property
    def requests(self) -> tuple[RequestShape, ...]:
        return tuple(c.request for c in self.chat_calls if c.request is not None)

    @property
    def get_paths(self) -> tuple[str, ...]:
        return tuple(c.get_path for c in self.calls if c.get_path is not None)

    @property
    def mode(self) -> str:
        return "chat" if self.flags_and_task.split()[:1] == [CHAT_FLAG] else "execute"

    @property
    def task(self) -> str:
        """The task text without its flags; where the recording left it out, the content
        of the first request's user message (what the agent was given)."""
        text = self.flags_and_task.strip()
        if self.mode == "chat":
            text = text[len(CHAT_FLAG):].strip()
        if text:
            return text
        first = self.requests[0].last if self.requests else None
        content = first.get("content") if first else None
        if not isinstance(content, str):
            raise ValueError(f"{self.run}: the recording names no task")
        return content

    @property
    def tool_forcing(self) -> bool:
        """Recorded against the server setup that honoured forced tool calls."""
        return "tool-forcing" in self.server


def _shape(raw: dict[str, Any]) -> RequestShape:
    last = raw.get("last_message")
    return RequestShape(
        tool_choice=raw.get("tool_choice"),
        tools=tuple(raw.get("tools") or ()),
        messages=int(raw.get("messages") or 0),
        last_message=last if isinstance(last, str) else json.dumps(last),
        max_tokens=raw.get("max_tokens"),
    )


def _usage(raw: dict[str, Any] | None) -> tuple[int, int] | None:
    if not raw:
        return None
    return int(raw.get("prompt_tokens") or 0), int(raw.get("completion_tokens") or 0)


def turn_of_reply(reply: dict[str, Any]) -> Turn:
    """A recorded reply as a turn: its text, tool calls, finish reason (as sent) and usage."""
    calls = tuple(ToolCallSpec(c["name"], str(c.get("arguments") or ""))
                  for c in reply.get("tool_calls") or ())
    return Turn(text=reply.get("content") or "", tool_calls=calls,
                finish_reason=reply.get("finish_reason"), usage=_usage(reply.get("usage")))


def turn_of_error(status: int, body: str) -> Turn:
    """A recorded error as a turn: the same status, message and error fields on the wire."""
    try:
        error = json.loads(body).get("error") or {}
    except (ValueError, AttributeError):
        error = {}
    if not isinstance(error, dict):
        error = {}
    message = str(error.get("message") or body)
    extra = tuple((k, v) for k, v in error.items() if k != "message")
    return Turn(fault=HttpError(status, message=message, extra=extra))


def _rebased(value: Any, root: str) -> Any:
    if isinstance(value, str) and (value == RECORDED_ROOT
                                   or value.startswith(RECORDED_ROOT + "/")):
        return root + value[len(RECORDED_ROOT):]
    return value


def _rooted(turn: Turn, root: str) -> Turn:
    calls = []
    for spec in turn.tool_calls:
        try:
            arguments = json.loads(spec.arguments_json)
        except ValueError:
            calls.append(spec)  # malformed arguments are replayed as they came
            continue
        if isinstance(arguments, dict):
            arguments = {k: _rebased(v, root) for k, v in arguments.items()}
        calls.append(replace(spec, arguments=json.dumps(arguments)))
    return replace(turn, tool_calls=tuple(calls))


def _call(raw: dict[str, Any]) -> RecordedCall:
    request = raw.get("request")
    if isinstance(request, str):
        method, _, path = request.partition(" ")
        return RecordedCall(get_path=path if method == "GET" else request)
    if not isinstance(request, dict):
        raise ValueError(f"unreadable recorded request: {request!r}")
    status = raw.get("status")
    if raw.get("reply") is not None:
        reply = turn_of_reply(raw["reply"])
    elif raw.get("error_body") is not None:
        reply = turn_of_error(int(status or 500), str(raw["error_body"]))
    else:
        reply = None
    return RecordedCall(request=_shape(request), status=status, reply=reply)


def load_recording(path: str | Path) -> Recording:
    """Read one recording (a JSON file)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return Recording(
        run=str(data["run"]),
        server=str(data.get("server") or ""),
        what_it_shows=str(data.get("what_it_shows") or ""),
        flags_and_task=str(data.get("task") or ""),
        calls=tuple(_call(c) for c in data.get("calls") or ()),
        outcome_then=dict(data.get("outcome_then") or {}),
    )


def _tool_names(tools: Sequence[dict[str, Any]]) -> tuple[str, ...]:
    return tuple(str(t.get("function", {}).get("name", "?")) for t in tools)


def shape_of_request(request: ModelRequest) -> RequestShape:
    """The recording's view of a request the scripted model got."""
    last = request.messages[-1] if request.messages else None
    return RequestShape(
        tool_choice=request.tool_choice if request.tools else None,
        tools=_tool_names(request.tools),
        messages=len(request.messages),
        last_message=json.dumps(last),
        max_tokens=request.max_tokens,
    )


def shape_of_body(body: dict[str, Any]) -> RequestShape:
    """The recording's view of a chat-completions body the loopback server got."""
    messages = body.get("messages") or []
    choice = body.get("tool_choice")
    return RequestShape(
        tool_choice=choice if isinstance(choice, str) or choice is None else "required",
        tools=_tool_names(body.get("tools") or ()),
        messages=len(messages),
        last_message=json.dumps(messages[-1] if messages else None),
        max_tokens=body.get("max_tokens") or body.get("max_completion_tokens"),
    )
