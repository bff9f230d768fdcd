"""The window-fit edge: the tool set each request carries, or the small-window failure.

It measures what every request carries (system prompt, tool schemas, task) against the
current model's window and offers the tool set the pure
:mod:`mercury_nb.contract.recovery.window_fit` picks, or the failure it names. The window is
the memory governor's (:func:`mercury_nb.transport.context_window.context_window_of`, with the
windows overflow errors taught it); both tool sets are measured over every tool of the
registry, so the choice does not change between a guard round's fewer tools and the next step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, assert_never

from mercury_nb.agent.events import Notice
from mercury_nb.agent.token_tally import TokenTally
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import WindowTooSmall
from mercury_nb.contract.recovery.compaction import protected_prefix_end
from mercury_nb.contract.recovery.memory_governor import tools_tokens
from mercury_nb.contract.recovery.window_fit import (
    FitObservation,
    FitState,
    OfferTools,
    prefix_fit,
    set_changes,
    step_fit,
)
from mercury_nb.transport.context_window import context_window_of

if TYPE_CHECKING:
    from mercury_nb.agent.events import EventSink
    from mercury_nb.agent.session import TaskSession
    from mercury_nb.tools.registry import ToolRegistry
    from mercury_nb.transport.protocol import ChatModel

SYSTEM_ROLES = ("system", "developer")


@dataclass
class ToolFit:
    """Picks each request's tool set for one task; holds the pure rule's state."""

    config: MercuryConfig
    learned: dict[str, int]
    """The memory governor's model name -> window learned from an overflow error."""
    state: FitState = field(default_factory=FitState)
    _sizes: tuple[int, int] | None = field(default=None, repr=False)
    tally: TokenTally = field(default_factory=TokenTally, repr=False)
    """The system prompt's and the task's estimate, kept per message."""

    def _tool_sizes(self, registry: ToolRegistry) -> tuple[int, int]:
        if self._sizes is None:
            self._sizes = (tools_tokens(registry.schemas()),
                           tools_tokens(registry.schemas(compact=True)))
        return self._sizes

    async def observe(
        self, model: ChatModel, session: TaskSession, registry: ToolRegistry, reply_tokens: int
    ) -> FitObservation:
        window = await context_window_of(model, self.config, self.learned)
        messages = session.messages
        system = [m for m in messages[:protected_prefix_end(messages)]
                  if m.get("role") in SYSTEM_ROLES]
        full, compact = self._tool_sizes(registry)
        return FitObservation(window=window, reply_tokens=reply_tokens,
                              system_tokens=self.tally.tokens(system), full_tokens=full,
                              compact_tokens=compact)

    async def offer(
        self, model: ChatModel, session: TaskSession, registry: ToolRegistry,
        names: tuple[str, ...] | None, reply_tokens: int, on_event: EventSink,
    ) -> tuple[dict[str, Any], ...] | WindowTooSmall:
        """The schemas of ``names`` (None: every tool) in the set that fits, after its notice;
        or the failure when the window cannot hold even that set."""
        observation = await self.observe(model, session, registry, reply_tokens)
        self.state, decision = step_fit(self.state, observation, self.config)
        match decision:
            case WindowTooSmall():
                return decision
            case OfferTools(tool_set=tool_set, notice=notice):
                if notice is not None:
                    on_event(Notice(notice, "compaction"))
                return registry.schemas(names, compact=tool_set == "compact")
            case _ as unreachable:
                assert_never(unreachable)

    async def changes_set(
        self, model: ChatModel, session: TaskSession, registry: ToolRegistry, reply_tokens: int
    ) -> bool:
        """The next request would carry another tool set (the window changed)."""
        observation = await self.observe(model, session, registry, reply_tokens)
        return set_changes(self.state, observation, self.config)

    async def unfit_prefix(
        self, model: ChatModel, session: TaskSession, registry: ToolRegistry, reply_tokens: int
    ) -> WindowTooSmall | None:
        """When compaction could not get under budget: the failure if even the part that is
        never cut (system prompt, tools, task) does not fit, else None (a resume may help)."""
        observation = await self.observe(model, session, registry, reply_tokens)
        prefix = session.messages[: protected_prefix_end(session.messages)]
        task_tokens = self.tally.tokens(prefix) - observation.system_tokens
        return prefix_fit(observation, max(0, task_tokens), self.config)
