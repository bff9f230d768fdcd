"""The turn router's tool-support facts: what a turn showed of its provider's tools, and the
no-tools failure (alone, or beside a window too small for the tool definitions).

* :func:`observe_turn_tools` feeds ``tool_support`` once per turn end, before the router
  reads the final reply, so a provider that lacks tools is known when the reply is judged.
* :func:`forcing_ignored`: a forced first step answered with prose and no tool call, be it a
  complete reply or prose cut by the output limit (not a tool call cut mid-write).
* :func:`next_tool_provider` is where a guard round goes: the first provider of the chain,
  from the one the guard asked for, whose server does not report that it lacks tools (one
  that only ignored forcings keeps its turn in the rotation: it may still answer one).
"""

from __future__ import annotations

from dataclasses import replace
from typing import assert_never

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import Ending, NoToolSupport, WindowTooSmall
from mercury_nb.contract.escalation.tool_support import (
    NoTools,
    TakesTools,
    ToolSupportObservation,
    lacks_tools,
    observe_tools,
    tool_support_decision,
)
from mercury_nb.contract.turns.router_state import RouterState, TurnFacts
from mercury_nb.contract.vocabulary import TurnVerdict


def forcing_ignored(facts: TurnFacts) -> bool:
    """The turn's forced first step got prose and no tool call: a complete reply, or prose
    cut by the output limit (a tool call cut mid-write was an attempt, not prose)."""
    prose = facts.verdict is TurnVerdict.TEXT_STOP or (
        facts.verdict is TurnVerdict.TRUNCATED and not facts.cut_write)
    return facts.forced and not facts.called_tools and prose


def observe_turn_tools(state: RouterState, facts: TurnFacts) -> RouterState:
    """``state`` with what the turn showed of its provider's tool support."""
    tools = observe_tools(state.tools, ToolSupportObservation(
        provider_index=state.providers.current, reported=facts.tools_reported,
        forced=facts.forced, called_tools=facts.called_tools,
        prose_stop=forcing_ignored(facts),
    ))
    return replace(state, tools=tools)


def serving_lacks_tools(state: RouterState, facts: TurnFacts, config: MercuryConfig) -> bool:
    """The provider that served the turn is known to lack tools, or ignored this forcing."""
    known = lacks_tools(state.tools, state.providers.current, config) is not None
    return known or forcing_ignored(facts)


def next_tool_provider(state: RouterState, index: int, config: MercuryConfig) -> int:
    """``index``, or the next provider of the chain after it not reported to lack tools."""
    length = max(len(config.model_chain), 1)
    for step in range(length):
        candidate = (index + step) % length
        if lacks_tools(state.tools, candidate, config) != "reported":
            return candidate
    return index % length


def no_tool_support(state: RouterState, config: MercuryConfig) -> NoToolSupport | None:
    """The no-tools failure when no model of the chain takes tools, else None."""
    match tool_support_decision(state.tools, len(config.model_chain), config):
        case TakesTools():
            return None
        case NoTools(evidence=evidence, ignored=ignored):
            return NoToolSupport(state.providers.provider, evidence, ignored)
        case _ as unreachable:
            assert_never(unreachable)


def window_ending(state: RouterState, window: WindowTooSmall, facts: TurnFacts) -> Ending:
    """The window cannot hold the tools: that failure, or, when the server also reports no
    tool support, the no-tools failure naming the window too (a larger window alone, or the
    compact tool set, would only lead to the next failure)."""
    if facts.tools_reported is False:
        return NoToolSupport(state.providers.provider, "reported", window=window)
    return window
