"""The memory governor: turns context and kernel-memory pressure into compact, summarize or pause.

What it does, exactly (this docstring is the one description of its behaviour):

* A *check* is one ``PressureObservation``. The loop takes one before every model request,
  and one again right after each compaction step it was told to run (before sending).
* *Context pressure*: the estimated prompt tokens exceed the usable budget (context window
  minus output reserve, see ``usable_budget``). *Memory pressure*: the kernel RSS exceeds the
  memory limit (``limit_mb``, else ``config.memory_limit_mb``); unknown RSS or no limit means
  no memory pressure. When both hold, memory is named first.
* A pressure-free check answers ``NoPressure`` and resets the governor.
* *Consecutive*: a pressure observed at the next check after a ``Compact`` or ``Summarize``,
  with no pressure-free check in between. Within such a run of pressured checks:

  1. the first pressure answers ``Compact(reason)``: head+tail compaction of the list that
     is actually sent (``compaction.compact_messages``), then continue;
  2. a consecutive pressure after ``Compact``: for context, ``Summarize("context")`` —
     head+tail was not enough to get under budget, so older turns are replaced by a
     model-written summary (``compaction.plan_summary`` / ``apply_summary``), the last
     compaction stage; for memory, ``PauseForPressure("memory", text)``, since the
     conversation has already given back what it holds and a summary request costs more;
  3. a consecutive pressure after ``Summarize``: ``PauseForPressure(reason, text)``.

  ``PauseForPressure`` pauses the task honestly (resumable with "continue"), naming memory
  or context with the numbers seen. Nothing here raises on pressure.
* If the loop cannot run a ``Summarize`` (``plan_summary`` found nothing to replace), it
  pauses with ``pressure_pause(observation, config)``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, assert_never

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.recovery.compaction import message_chars

PressureReason = Literal["context", "memory"]

MESSAGE_OVERHEAD_TOKENS = 4
"""Tokens a message costs beyond its text (role, separators)."""

TOOL_CALL_OVERHEAD_TOKENS = 8
"""Tokens a tool call costs beyond its name and arguments (id, type, wrapping)."""

NON_TEXT_PART_TOKENS = 256
"""Flat estimate for a content part that is not text (an image)."""

CHARS_PER_TOKEN = 4


def estimate_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """Cheap prompt-size estimate: chars / 4 (text and tool-call arguments) plus overheads."""
    return REPLY_PRIMING_TOKENS + sum(message_tokens(message) for message in messages)


REPLY_PRIMING_TOKENS = 3
"""Tokens a prompt costs once, beyond its messages (reply priming)."""


def message_tokens(message: Mapping[str, Any]) -> int:
    """One message's share of :func:`estimate_tokens` (it depends on that message only, so a
    caller may keep it per message and add up running totals)."""
    tokens = MESSAGE_OVERHEAD_TOKENS + math.ceil(message_chars(message) / CHARS_PER_TOKEN)
    tokens += TOOL_CALL_OVERHEAD_TOKENS * len(message.get("tool_calls") or ())
    content = message.get("content")
    if isinstance(content, list):
        tokens += NON_TEXT_PART_TOKENS * sum(
            1 for part in content if not (isinstance(part, Mapping) and "text" in part)
        )
    return tokens


def tools_tokens(tools: Sequence[Mapping[str, Any]]) -> int:
    """Estimated prompt tokens of the tool schemas sent with a request (chars / 4 of their
    JSON)."""
    return math.ceil(len(json.dumps(list(tools))) / CHARS_PER_TOKEN) if tools else 0


def usable_budget(context_window: int, output_reserve: int) -> int:
    """Prompt tokens that fit: the window minus the output reserve.

    The reserve is capped at half the window, so a small-window model still has room for a
    prompt when ``max_output_tokens`` is set above its native limit.
    """
    window = max(0, context_window)
    return window - min(max(0, output_reserve), window // 2)


@dataclass(frozen=True)
class PressureObservation:
    """One check: prompt size against the budget, and kernel RSS against the limit."""

    prompt_tokens: int
    budget_tokens: int
    rss_mb: float | None = None
    limit_mb: int | None = None


@dataclass(frozen=True)
class NoPressure:
    """Send the request as it is."""


@dataclass(frozen=True)
class Compact:
    """Head+tail compaction of the message list that is sent, then check again."""

    reason: PressureReason


@dataclass(frozen=True)
class Summarize:
    """Compaction was not enough: replace older turns by a model summary, then check again."""

    reason: PressureReason


@dataclass(frozen=True)
class PauseForPressure:
    """Pause the task honestly for ``why`` (what pressed and the advice, the words the pause
    banner carries); it can be resumed with "continue"."""

    reason: PressureReason
    why: str


GovernorDecision = NoPressure | Compact | Summarize | PauseForPressure


@dataclass(frozen=True)
class GovernorState:
    """The compaction step answered at the previous check, if that check saw pressure."""

    stage: Literal["clear", "compacted", "summarized"] = "clear"


def _limit(observation: PressureObservation, config: MercuryConfig) -> int | None:
    return observation.limit_mb if observation.limit_mb is not None else config.memory_limit_mb


def pressures(
    observation: PressureObservation, config: MercuryConfig
) -> tuple[PressureReason, ...]:
    """The pressures this check sees, memory first."""
    found: list[PressureReason] = []
    limit = _limit(observation, config)
    if observation.rss_mb is not None and limit is not None and observation.rss_mb > limit:
        found.append("memory")
    if observation.prompt_tokens > observation.budget_tokens:
        found.append("context")
    return tuple(found)


def pressure_pause(observation: PressureObservation, config: MercuryConfig) -> PauseForPressure:
    """The honest pause for the pressures in ``observation`` (context when none is seen)."""
    found = pressures(observation, config) or ("context",)
    parts: list[str] = []
    for reason in found:
        match reason:
            case "memory":
                parts.append(
                    f"the kernel is using {observation.rss_mb:.0f} MB of memory, over its "
                    f"{_limit(observation, config)} MB limit"
                )
            case "context":
                parts.append(
                    f"the conversation is still too large for the model's context (about "
                    f"{observation.prompt_tokens:,} tokens for a budget of "
                    f"{observation.budget_tokens:,})"
                )
            case _ as unreachable:
                assert_never(unreachable)
    advice = (
        "Free some memory in the kernel (or raise MERCURY_MEMORY_LIMIT_MB)"
        if found[0] == "memory"
        else "Switch to a model with a larger context window if you can"
    )
    why = f"{' and '.join(parts)}, even after compacting the conversation. {advice}"
    return PauseForPressure(reason=found[0], why=why)


def step_governor(
    state: GovernorState, observation: PressureObservation, config: MercuryConfig
) -> tuple[GovernorState, GovernorDecision]:
    """Advance the governor by one check; see the module docstring for the rules."""
    found = pressures(observation, config)
    if not found:
        return GovernorState(), NoPressure()
    reason = found[0]
    match state.stage:
        case "clear":
            return GovernorState("compacted"), Compact(reason)
        case "compacted":
            if reason == "context":
                return GovernorState("summarized"), Summarize(reason)
            return state, pressure_pause(observation, config)
        case "summarized":
            return state, pressure_pause(observation, config)
        case _ as unreachable:
            assert_never(unreachable)
