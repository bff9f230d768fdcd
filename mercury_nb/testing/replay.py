"""Recorded model traffic played back: a recording's replies in order, its requests compared.

A recording (JSON, see ``tests/replays/data/README.md``) holds one run against a real
model: every request in order, each with the shape of what was sent (tool choice, tool
names, message count, last message, ``max_tokens``) and what came back (a streamed reply
folded into content, tool calls, finish reason and usage, or an HTTP error body).

:class:`ReplayModel` answers the agent in process; :func:`replay_server` serves the same
replies over the loopback HTTP server, so the openai-SDK transport, ``GET /props`` and the
context probe run too. Both keep what the agent sent as :class:`RequestShape` values, the
shape the recording keeps, so a test compares them field by field.

When the agent asks for more replies than were recorded, ``on_exhausted`` decides:
``"fail"`` (the default) refuses the request (the scripted model raises
:class:`~mercury_nb.testing.ScriptExhausted`, the server answers 400) and ``assert_complete``
reports it; ``"repeat_last"`` answers with the last recorded reply again, which is what a
stuck small model does, and counts those requests in ``repeated``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mercury_nb.testing.loopback_server import LoopbackServer
from mercury_nb.testing.replay_format import (
    RecordedCall,
    Recording,
    RequestShape,
    load_recording,
    shape_of_body,
    shape_of_request,
)
from mercury_nb.testing.script import OnExhausted
from mercury_nb.testing.scripted_model import ScriptedModel

__all__ = [
    "LARGE_WINDOW", "SMALL_WINDOW", "RecordedCall", "Recording", "ReplayModel", "RequestShape",
    "load_recording", "no_tools_props", "observed_on", "props_for", "replay_server",
    "shape_of_body", "shape_of_request", "tools_props",
]

SMALL_WINDOW_RUN_PREFIX = "r7"
"""Runs recorded against a server started with ``-c 2048``."""
SMALL_WINDOW = 2048
LARGE_WINDOW = 8192


class ReplayModel(ScriptedModel):
    """A scripted model that answers with a recording's replies in order."""

    def __init__(self, recording: Recording, on_exhausted: OnExhausted = "fail",
                 name: str | None = None, workspace: str | Path | None = None) -> None:
        super().__init__(recording.turns_in(workspace),
                         name=name or f"scripted/replay-{recording.run}",
                         on_exhausted=on_exhausted)
        self.recording = recording

    @property
    def observed(self) -> list[RequestShape]:
        """Every request the agent sent, in the recording's shape."""
        return [shape_of_request(r) for r in self.requests]


def no_tools_props(n_ctx: int) -> dict[str, Any]:
    """llama.cpp's ``/props`` for a chat template without tool support."""
    return {"chat_template_caps": {"supports_tools": False, "supports_tool_calls": False},
            "default_generation_settings": {"n_ctx": n_ctx}}


def tools_props(n_ctx: int) -> dict[str, Any]:
    """llama.cpp's ``/props`` for a chat template that takes tools."""
    return {"chat_template_caps": {"supports_tools": True, "supports_tool_calls": True},
            "default_generation_settings": {"n_ctx": n_ctx}}


def props_for(recording: Recording) -> dict[str, Any]:
    """The ``/props`` body a run's server gave (the recording does not hold it): tool support
    on the tool-forcing setup, none on the default template; 2,048 tokens for the ``-c 2048``
    runs, else a large window."""
    n_ctx = SMALL_WINDOW if recording.run.startswith(SMALL_WINDOW_RUN_PREFIX) else LARGE_WINDOW
    return tools_props(n_ctx) if recording.tool_forcing else no_tools_props(n_ctx)


def replay_server(recording: Recording, props: dict[str, Any] | None = None,
                  on_exhausted: OnExhausted = "fail",
                  workspace: str | Path | None = None) -> LoopbackServer:
    """A loopback server (not started) that answers chat requests with the recording's replies
    (``workspace``: see :meth:`Recording.turns_in`) and ``GET /props`` with ``props``
    (default :func:`props_for`)."""
    body = props_for(recording) if props is None else props
    return LoopbackServer(list(recording.turns_in(workspace)), routes={"/props": body},
                          on_exhausted=on_exhausted)


def observed_on(server: LoopbackServer) -> list[RequestShape]:
    """Every chat request the server got, in the recording's shape."""
    return [shape_of_body(body) for body in server.requests]
