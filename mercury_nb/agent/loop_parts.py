"""LoopParts: what the loop's helpers (the evidence gatherer, the memory governor) use of it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from mercury_nb.agent.events import EventSink
    from mercury_nb.agent.session import TaskSession
    from mercury_nb.tools.base import ToolContext
    from mercury_nb.transport.protocol import ChatModel


class LoopParts(Protocol):
    """The session, the tool context, the sink and the serving model (the agent loop has
    them); a helper's own protocol adds what else it reads."""

    session: TaskSession
    ctx: ToolContext

    @property
    def on_event(self) -> EventSink: ...

    @property
    def model(self) -> ChatModel: ...
