"""The memory governor's edge: measures the prompt and the kernel before each request, and
compacts or summarizes the conversation that is actually sent, in place, or says why to pause.

The rules are the pure :mod:`mercury_nb.contract.recovery.memory_governor`'s (when to compact, to
summarize, to pause) and :mod:`mercury_nb.contract.recovery.compaction`'s (how). Here:

* The prompt is estimated from ``session.messages`` plus the offered tool schemas, against
  the usable budget of the current model's context window: litellm's model info for a
  litellm model it knows (:func:`litellm_context_window`, local data only), else
  ``config.context_window``; with neither, there is no context budget.
* Kernel RSS comes from ``/proc/self/statm`` (else the peak from ``resource``), checked only
  when ``config.memory_limit_mb`` is set.
* ``Compact`` replaces the contents of ``session.messages`` itself, so the next request
  sends the compacted list (the original compacted a copy); ``Summarize`` asks the current
  model, in a plain request without tools, for the summary ``plan_summary`` describes and
  applies it. A summary that cannot be had (no span to replace, a failed, stalled or empty
  reply) ends in the governor's honest pause. Nothing here raises on pressure.
"""

from __future__ import annotations

import asyncio
import gc
import json
import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, assert_never

from mercury_nb.agent.events import Notice, ignore_events
from mercury_nb.agent.step import StepFailedBeforeOutput, watched_step
from mercury_nb.agent.watchdog_runner import AttemptStalled
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.recovery.compaction import apply_summary, compact_messages, plan_summary
from mercury_nb.contract.recovery.memory_governor import (
    CHARS_PER_TOKEN,
    Compact,
    GovernorState,
    NoPressure,
    PauseForPressure,
    PressureObservation,
    PressureReason,
    Summarize,
    estimate_tokens,
    pressure_pause,
    step_governor,
    usable_budget,
)
from mercury_nb.transport.protocol import ChatModel, ModelRequest

if TYPE_CHECKING:
    from mercury_nb.agent.events import EventSink
    from mercury_nb.agent.session import TaskSession
    from mercury_nb.agent.watchdog_runner import StallWatch


class GovernedLoop(Protocol):
    """What the governor uses of the loop: the sent list, the serving model, the watch and
    the sink (the agent loop has them)."""

    session: TaskSession

    @property
    def on_event(self) -> EventSink: ...

    @property
    def model(self) -> ChatModel: ...

    @property
    def watch(self) -> StallWatch: ...

STATM = Path("/proc/self/statm")
NO_BUDGET = sys.maxsize
"""The prompt budget when no context window is known: no context pressure."""

SUMMARY_MAX_TOKENS = 4096
"""``max_tokens`` of the summary request (the summary asks for at most 600 words)."""

SERVER_QUERIED_PROVIDERS = frozenset({"ollama", "ollama_chat", "huggingface"})
"""Providers whose model info litellm fetches from a server: never asked (no network)."""

COMPACTED_NOTICE = (
    "Compacted {count} older message{s} to head+tail to relieve {reason} pressure "
    "({before:,} → {after:,} chars)."
)
SUMMARIZED_NOTICE = "Summarized {count} earlier messages to relieve context pressure."

_windows: dict[str, int | None] = {}


def read_rss_mb() -> float | None:
    """This process's resident memory in MB (the peak where /proc is missing), or None."""
    try:
        pages = int(STATM.read_text().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError, AttributeError):
        pass
    try:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    except (ImportError, OSError):
        return None
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024


def litellm_context_window(litellm: Any, name: str) -> int | None:
    """Input tokens litellm's bundled model info gives for ``name``, or None when it does not
    know the model. Providers whose info lives on a server are not asked."""
    if name.split("/", 1)[0] in SERVER_QUERIED_PROVIDERS:
        return None
    try:
        info = litellm.get_model_info(name)
    except Exception:
        return None
    for key in ("max_input_tokens", "max_tokens"):
        value = info.get(key) if hasattr(info, "get") else None
        if isinstance(value, int) and value > 0:
            return value
    return None


async def context_window_of(model: ChatModel, config: MercuryConfig) -> int | None:
    """The context window to budget for: litellm's for a litellm model it knows (asked once
    per name, off the event loop; for an openai-SDK model, read from litellm's bundled table
    without importing litellm), else ``config.context_window`` (None: unknown)."""
    from mercury_nb.transport.litellm_model import LiteLLMModel
    from mercury_nb.transport.openai_model import OpenAIModel

    if isinstance(model, OpenAIModel) and model.catalog_names:
        from mercury_nb.transport.model_info import bundled_context_window

        if model.name not in _windows:
            found = await asyncio.to_thread(bundled_context_window, *model.catalog_names)
            _windows[model.name] = found
        known = _windows[model.name]
        if known is not None:
            return known
    elif isinstance(model, LiteLLMModel):
        if model.name not in _windows:
            try:
                from mercury_nb.transport.litellm_loader import load_litellm

                litellm = await load_litellm()
                found = await asyncio.to_thread(litellm_context_window, litellm, model.name)
            except Exception:
                found = None
            _windows[model.name] = found
        known = _windows[model.name]
        if known is not None:
            return known
    return config.context_window


def tools_tokens(tools: tuple[dict[str, Any], ...]) -> int:
    """Estimated prompt tokens of the tool schemas sent with a request."""
    return math.ceil(len(json.dumps(tools)) / CHARS_PER_TOKEN) if tools else 0


@dataclass
class MemoryGovernor:
    """Checks before every request of one task; holds the pure governor's state."""

    config: MercuryConfig
    state: GovernorState = field(default_factory=GovernorState)

    async def relieve(
        self, loop: GovernedLoop, tools: tuple[dict[str, Any], ...], output_reserve: int
    ) -> str | None:
        """Compact or summarize ``loop.session.messages`` until the governor sees no
        pressure. Returns None to go on, or the governor's pause text."""
        window = await context_window_of(loop.model, self.config)
        budget = usable_budget(window, output_reserve) if window else NO_BUDGET
        extra_tokens = tools_tokens(tools)
        while True:
            observation = self._observe(loop.session.messages, budget, extra_tokens)
            self.state, decision = step_governor(self.state, observation, self.config)
            match decision:
                case NoPressure():
                    return None
                case Compact(reason=reason):
                    self._compact(loop, reason)
                case Summarize():
                    if not await self._summarize(loop, budget, output_reserve):
                        return pressure_pause(observation, self.config).text
                case PauseForPressure(text=text):
                    return text
                case _ as unreachable:
                    assert_never(unreachable)

    def _observe(
        self, messages: list[dict[str, Any]], budget: int, extra_tokens: int
    ) -> PressureObservation:
        rss = read_rss_mb() if self.config.memory_limit_mb is not None else None
        return PressureObservation(
            prompt_tokens=estimate_tokens(messages) + extra_tokens,
            budget_tokens=budget,
            rss_mb=rss,
        )

    def _compact(self, loop: GovernedLoop, reason: PressureReason) -> None:
        messages = loop.session.messages
        result = compact_messages(messages, self.config)
        messages[:] = list(result.messages)  # the list that is sent, not a copy
        if reason == "memory":
            gc.collect()
        if result.compacted:
            loop.on_event(Notice(kind="compaction", text=COMPACTED_NOTICE.format(
                count=result.compacted, s="" if result.compacted == 1 else "s", reason=reason,
                before=result.chars_before, after=result.chars_after,
            )))

    async def _summarize(self, loop: GovernedLoop, budget: int, output_reserve: int) -> bool:
        """Replace older turns by the current model's summary; False when it cannot."""
        messages = loop.session.messages
        transcript_chars = min(120_000, max(8_000, budget * CHARS_PER_TOKEN // 2))
        plan = plan_summary(messages, self.config, max_transcript_chars=transcript_chars)
        if plan is None:
            return False
        model = loop.model
        request = ModelRequest(
            messages=plan.request, max_tokens=min(output_reserve, SUMMARY_MAX_TOKENS)
        )
        try:
            reply = await watched_step(model, request, ignore_events, loop.session.steps_total,
                                       loop.watch, f"summarizing with {model.name}")
        except (StepFailedBeforeOutput, AttemptStalled):
            return False
        if not reply.complete or reply.tool_calls:
            return False
        try:
            summarized = apply_summary(messages, plan, reply.text)
        except ValueError:
            return False
        messages[:] = list(summarized)
        loop.on_event(Notice(SUMMARIZED_NOTICE.format(count=plan.replaced), "compaction"))
        return True
