"""The window fit: the tool set a model's window holds, or the honest failure when none fits.

Pure rules (no I/O). Every request carries the system prompt and the tool definitions, and
the task (the first user message) is never cut either. The prompt budget is the window
minus the reply's reserve (``usable_budget``); token counts are the project's estimates
(``estimate_tokens``, ``tools_tokens``).

* ``step_fit`` picks the tool set for the next request. ``tool_set`` ``"full"`` or
  ``"compact"`` is used as configured; ``"auto"`` uses the full set while the system prompt
  and the full schemas take at most ``FULL_SET_SHARE`` of the budget, else the compact set
  (the same tool and parameter names, short descriptions). Moving to the compact set shows a
  notice. When the set chosen cannot fit beside the system prompt at all, the answer is the
  :class:`~mercury_nb.contract.endings.WindowTooSmall` failure with the numbers and the
  fixes: no request is sent, and continuing with the same window could not help. An
  unknown window is never judged.
* ``set_changes``: after an overflow error taught a smaller window, a request the shrink
  could not cut is still worth sending again when the tool set changes with that window.
* ``prefix_fit``: when the conversation stays too large after compaction, a resume can help
  only if what is never cut (system prompt, tools, task) fits the budget; otherwise the
  answer is ``WindowTooSmall`` naming the task, not a pause that promises a resume.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import WindowTooSmall
from mercury_nb.contract.recovery.context_budget import output_cap
from mercury_nb.contract.recovery.memory_governor import usable_budget

ToolSet = Literal["full", "compact"]

FULL_SET_SHARE = 0.5
"""``auto`` keeps the full tool set while the system prompt and its schemas take at most this
share of the prompt budget (the rest is the conversation's)."""
SMALLEST_SUGGESTED_WINDOW = 4096
"""The first window size tried when suggesting a larger one (sizes double from here)."""

COMPACT_TOOLS_NOTICE = (
    "Using the compact tool set (short descriptions, about {compact:,} tokens instead of "
    "{full:,}): the full one leaves too little of this model's {window:,}-token window for "
    "the conversation."
)
CONFIGURED_COMPACT_NOTICE = (
    "Using the compact tool set (MERCURY_TOOL_SET=compact): about {compact:,} tokens instead "
    "of {full:,}."
)


@dataclass(frozen=True)
class FitObservation:
    """The sizes one request is built from, in estimated tokens."""

    window: int | None
    """The context window budgeted for (None: unknown, nothing is judged)."""
    reply_tokens: int
    """``max_tokens`` of the request: reserved for the reply."""
    system_tokens: int
    full_tokens: int
    """Every tool's full schema."""
    compact_tokens: int
    """Every tool's compact schema."""


@dataclass(frozen=True)
class FitState:
    """The tool set of the last request (None before the first)."""

    tool_set: ToolSet | None = None


@dataclass(frozen=True)
class OfferTools:
    """Send the request with ``tool_set``'s schemas; show ``notice`` first when there is one."""

    tool_set: ToolSet
    notice: str | None = None


FitDecision = OfferTools | WindowTooSmall


def prompt_budget(observation: FitObservation) -> int | None:
    """Prompt tokens the window leaves after the reply's reserve (None: unknown window)."""
    if observation.window is None:
        return None
    return usable_budget(observation.window, observation.reply_tokens)


def chosen_set(observation: FitObservation, config: MercuryConfig) -> ToolSet:
    """The configured set, or for ``auto`` the full one while it fits comfortably."""
    if config.tool_set != "auto":
        return config.tool_set
    budget = prompt_budget(observation)
    if budget is None:
        return "full"
    fixed = observation.system_tokens + observation.full_tokens
    return "full" if fixed <= budget * FULL_SET_SHARE else "compact"


def _tokens(observation: FitObservation, tool_set: ToolSet) -> int:
    return observation.full_tokens if tool_set == "full" else observation.compact_tokens


def larger_window(observation: FitObservation, config: MercuryConfig, task_tokens: int = 0) -> int:
    """The smallest doubling of ``SMALLEST_SUGGESTED_WINDOW`` above the current window whose
    budget holds the system prompt, the full tools (and ``task_tokens``) comfortably."""
    needed = observation.system_tokens + observation.full_tokens + task_tokens
    window = SMALLEST_SUGGESTED_WINDOW
    while window < 1 << 30:
        reply = output_cap(window, config.max_output_tokens, config)
        roomy = needed <= usable_budget(window, reply) * FULL_SET_SHARE
        if window > (observation.window or 0) and roomy:
            break
        window *= 2
    return window


def too_small(
    observation: FitObservation, tool_set: ToolSet, config: MercuryConfig, task_tokens: int = 0
) -> WindowTooSmall:
    """The failure for a request whose fixed part (and ``task_tokens``) exceeds the budget."""
    window = observation.window or 0
    budget = prompt_budget(observation) or 0
    compact_fits = (observation.system_tokens + observation.compact_tokens + task_tokens
                    <= budget)
    return WindowTooSmall(
        window=window, budget=budget, reply_tokens=observation.reply_tokens,
        system_tokens=observation.system_tokens, tools_tokens=_tokens(observation, tool_set),
        compact=tool_set == "compact", task_tokens=task_tokens,
        compact_tokens=observation.compact_tokens
        if tool_set == "full" and compact_fits else None,
        larger_window=larger_window(observation, config, task_tokens),
    )


def _notice(observation: FitObservation, config: MercuryConfig) -> str:
    numbers = {"compact": observation.compact_tokens, "full": observation.full_tokens}
    if config.tool_set == "compact" or observation.window is None:
        return CONFIGURED_COMPACT_NOTICE.format(**numbers)
    return COMPACT_TOOLS_NOTICE.format(window=observation.window, **numbers)


def step_fit(
    state: FitState, observation: FitObservation, config: MercuryConfig
) -> tuple[FitState, FitDecision]:
    """The tool set for the next request, or the failure when the window cannot hold it."""
    tool_set = chosen_set(observation, config)
    budget = prompt_budget(observation)
    fixed = observation.system_tokens + _tokens(observation, tool_set)
    if budget is not None and fixed > budget:
        return state, too_small(observation, tool_set, config)
    moved = tool_set == "compact" and state.tool_set != "compact"
    return FitState(tool_set), OfferTools(tool_set, _notice(observation, config) if moved else None)


def set_changes(state: FitState, observation: FitObservation, config: MercuryConfig) -> bool:
    """The next request would carry another tool set than the last (a window learned from an
    overflow error can make the compact set the one that fits: worth sending again)."""
    return state.tool_set is not None and chosen_set(observation, config) != state.tool_set


def prefix_fit(
    observation: FitObservation, task_tokens: int, config: MercuryConfig
) -> WindowTooSmall | None:
    """After compaction failed to get under budget: the failure when even what is never cut
    (system prompt, the tool set for this window, the task) exceeds the budget, since a
    resume could not get under it either; None when a resume can still succeed."""
    budget = prompt_budget(observation)
    if budget is None:
        return None
    tool_set = chosen_set(observation, config)
    fixed = observation.system_tokens + _tokens(observation, tool_set)
    if fixed > budget:
        return too_small(observation, tool_set, config)
    if fixed + task_tokens > budget:
        return too_small(observation, tool_set, config, task_tokens)
    return None
