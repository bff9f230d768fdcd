"""Whether the models of the chain take tools at all: what each server reports, what it does.

A server that drops the ``tools`` of a request (llama.cpp with a chat template that has no
tool support) answers every step in prose, a forced ``tool_choice: "required"`` too. The
guard cannot cure that, however many rounds it runs. Fed every turn end,
:func:`step_tool_support` learns per provider of the chain:

* what its server reported (``/props`` ``chat_template_caps``: True, False, or None when it
  does not say);
* whether it ever answered with a tool call: then it takes tools, whatever it reported;
* how many forced steps (``tool_choice`` sent as ``required``) it answered with prose and no
  tool call. A step sent with ``tool_choice`` auto (a round degraded after the provider
  refused ``required``) is no forcing and never counts.

A provider lacks tools when it never made a tool call and either its server reported no tool
support, or it ignored ``config.ignored_forcing_limit`` forcings. :class:`NoTools` is decided
when every provider of the chain lacks tools; it says how that is known (``reported`` wins
over ``observed`` when both hold).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from mercury_nb.contract.config import MercuryConfig

ToolsEvidence = Literal["reported", "observed"]


@dataclass(frozen=True)
class ToolSupportObservation:
    """One turn end, as the tool-support decision sees it."""

    provider_index: int
    reported: bool | None
    """What the serving provider's server reports (None: it does not say, or not asked)."""
    forced: bool
    """The turn's first step was sent with ``tool_choice`` ``required``."""
    called_tools: bool
    """The model answered with at least one tool call during the turn."""
    prose_stop: bool = True
    """The turn ended as a complete reply (a ``text-stop``): only then was a forcing ignored."""


@dataclass(frozen=True)
class ToolSupportState:
    """Per provider index: what its server reported, the forcings it ignored, and whether it
    made a tool call."""

    reported: tuple[tuple[int, bool], ...] = ()
    ignored: tuple[tuple[int, int], ...] = ()
    called: frozenset[int] = frozenset()

    def ignored_by(self, index: int) -> int:
        return dict(self.ignored).get(index, 0)

    def reported_by(self, index: int) -> bool | None:
        return dict(self.reported).get(index)


@dataclass(frozen=True)
class TakesTools:
    """Some provider may take tools (or none is known not to): the guard goes on."""


@dataclass(frozen=True)
class NoTools:
    """No provider of the chain takes tools: a guard round cannot help.

    ``evidence``: ``reported`` when a server said so, else ``observed`` (``ignored`` forced
    steps, the most any provider ignored, were answered with prose)."""

    evidence: ToolsEvidence
    ignored: int = 0


ToolSupportDecision = TakesTools | NoTools


def lacks_tools(state: ToolSupportState, index: int, config: MercuryConfig) -> ToolsEvidence | None:
    """How provider ``index`` is known to lack tools, or None when it may take them."""
    if index in state.called:
        return None
    if state.reported_by(index) is False:
        return "reported"
    if state.ignored_by(index) >= config.ignored_forcing_limit:
        return "observed"
    return None


def observe_tools(state: ToolSupportState, obs: ToolSupportObservation) -> ToolSupportState:
    """``state`` with what the turn showed of its provider."""
    index = obs.provider_index
    if obs.reported is not None:
        reported = (*(r for r in state.reported if r[0] != index), (index, obs.reported))
        state = replace(state, reported=tuple(sorted(reported)))
    if obs.called_tools:
        return replace(state, called=state.called | {index})
    if obs.forced and obs.prose_stop:
        count = state.ignored_by(index) + 1
        ignored = (*(i for i in state.ignored if i[0] != index), (index, count))
        state = replace(state, ignored=tuple(sorted(ignored)))
    return state


def forcings_left(state: ToolSupportState, chain_length: int, config: MercuryConfig) -> int | None:
    """How many more forced steps answered in prose make :class:`NoTools` (every provider of
    the chain lacking tools); None while some provider made a tool call (no such bound)."""
    indexes = range(max(chain_length, 1))
    if any(index in state.called for index in indexes):
        return None
    return sum(max(0, config.ignored_forcing_limit - state.ignored_by(index))
               for index in indexes if state.reported_by(index) is not False)


def tool_support_decision(
    state: ToolSupportState, chain_length: int, config: MercuryConfig
) -> ToolSupportDecision:
    """:class:`NoTools` when every provider of the chain lacks tools, else :class:`TakesTools`."""
    evidence = [lacks_tools(state, index, config) for index in range(max(chain_length, 1))]
    if any(found is None for found in evidence):
        return TakesTools()
    most = max((count for _, count in state.ignored), default=0)
    return NoTools("reported" if "reported" in evidence else "observed", most)


def step_tool_support(
    state: ToolSupportState, obs: ToolSupportObservation, config: MercuryConfig
) -> tuple[ToolSupportState, ToolSupportDecision]:
    """Learn from one turn end, then decide."""
    state = observe_tools(state, obs)
    return state, tool_support_decision(state, len(config.model_chain), config)
