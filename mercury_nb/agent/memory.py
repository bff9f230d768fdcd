"""The memory governor's edge: measures the prompt and the kernel before each request, and
compacts or summarizes the conversation that is actually sent, in place, or says why to pause.

The rules are the pure :mod:`mercury_nb.contract.recovery.memory_governor`'s (when to compact, to
summarize, to pause), :mod:`mercury_nb.contract.recovery.compaction`'s and
:mod:`~mercury_nb.contract.recovery.pressure_compaction`'s (how, and how far) and
:mod:`mercury_nb.contract.recovery.context_budget`'s (what an overflow means, when a shrunk
prompt is resent and when nothing is left to cut). Here:

* The prompt is estimated from ``session.messages`` plus the offered tool schemas, against
  the usable budget of the current model's context window
  (:func:`mercury_nb.transport.context_window.context_window_of`); with none known there is
  no context budget.
* Kernel RSS comes from ``/proc/self/statm`` (else the peak from ``resource``), checked only
  when ``config.memory_limit_mb`` is set.
* ``Compact`` replaces the contents of ``session.messages`` itself, so the next request
  sends the compacted list (compacting a copy would send it all); ``Summarize`` asks the current
  model, in a plain request without tools, for the summary ``plan_summary`` describes and
  applies it. A summary that cannot be had (no span to replace, a failed, stalled or empty
  reply) ends in the governor's honest pause. Nothing here raises on pressure.
"""

from __future__ import annotations

import gc
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, assert_never

from mercury_nb.agent.events import MemoryPressurePause, Notice, ignore_events
from mercury_nb.agent.loop_parts import LoopParts
from mercury_nb.agent.stall_watch import AttemptStalled
from mercury_nb.agent.step import StepFailedBeforeOutput, watched_step
from mercury_nb.agent.token_tally import TokenTally
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.recovery.compaction import (
    apply_summary,
    plan_summary,
    protected_prefix_end,
)
from mercury_nb.contract.recovery.context_budget import (
    OverflowObservation,
    OverflowState,
    PauseForOverflow,
    SendShrunk,
    ShrinkAndRetry,
    ShrinkObservation,
    output_cap,
    parse_context_overflow,
    shrink_to_fit,
    step_overflow,
    step_overflow_shrunk,
    tool_result_chars,
)
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
    tools_tokens,
    usable_budget,
)
from mercury_nb.contract.recovery.pressure_compaction import compact_for_pressure
from mercury_nb.contract.spend import context_percent
from mercury_nb.transport.context_window import context_window_of
from mercury_nb.transport.protocol import ModelRequest, ProviderError

if TYPE_CHECKING:
    from mercury_nb.agent.stall_watch import StallWatch


class GovernedLoop(LoopParts, Protocol):
    """What the governor uses of the loop: its parts (the sent list in the session, the tool
    context whose result budget it sets) and the watch."""

    @property
    def watch(self) -> StallWatch: ...

STATM = Path("/proc/self/statm")
NO_BUDGET = sys.maxsize
"""The prompt budget when no context window is known: no context pressure."""

SUMMARY_MAX_TOKENS = 4096
"""``max_tokens`` of the summary request (the summary asks for at most 600 words)."""

COMPACTED_NOTICE = (
    "Compacted {count} older message{s} to head+tail to relieve {reason} pressure "
    "({before:,} → {after:,} chars)."
)
SUMMARIZED_NOTICE = "Summarized {count} earlier messages to relieve context pressure."
OVERFLOW_NOTICE = (
    "The provider said the request exceeds its {window}context: compacted the conversation "
    "({before:,} → {after:,} chars) and sending the same step again."
)


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


@dataclass
class MemoryGovernor:
    """Checks before every request of one task; holds the pure governor's state."""

    config: MercuryConfig
    state: GovernorState = field(default_factory=GovernorState)
    overflow: OverflowState = field(default_factory=OverflowState)
    learned: dict[str, int] = field(default_factory=dict)
    """Model name -> the window its own overflow error named."""
    context: int | None = None
    """How full the last checked prompt fills the usable budget, in percent (None: no
    window known): the status and the pulse show it."""
    tally: TokenTally = field(default_factory=TokenTally, repr=False)
    """The checks' prompt estimate, kept per message: a check measures only new messages."""

    async def output_cap(self, loop: GovernedLoop, asked: int) -> int:
        """``asked`` capped at the window's output fraction (the output never fills it)."""
        window = await context_window_of(loop.model, self.config, self.learned)
        return output_cap(window, asked, self.config)

    async def absorb_overflow(
        self, loop: GovernedLoop, error: ProviderError, request: ModelRequest
    ) -> SendShrunk | PauseForOverflow | None:
        """A context overflow of ``request``: learn the window it names, shrink the
        conversation and answer :class:`SendShrunk` (send the same step again), or the honest
        :class:`PauseForOverflow` when it still does not fit. None: not an overflow."""
        overflow = parse_context_overflow(error.status, error.kind, error.message)
        if overflow is None:
            return None
        extra = tools_tokens(request.tools)
        known = await context_window_of(loop.model, self.config, self.learned)
        observation = OverflowObservation(
            overflow=overflow, estimated_tokens=estimate_tokens(request.messages) + extra,
            known_window=known, output_reserve=request.max_tokens,
        )
        self.overflow, decision = step_overflow(self.overflow, observation, self.config)
        match decision:
            case PauseForOverflow():
                return decision
            case ShrinkAndRetry(window=window, target_tokens=target):
                if window is not None:
                    self.learned[loop.model.name] = window
                messages = loop.session.messages
                result = shrink_to_fit(messages, max(1, target - extra))
                messages[:] = list(result.messages)
                shrunk = ShrinkObservation(
                    overflow=observation, cut=result.compacted, target_tokens=target,
                    tokens_after=estimate_tokens(result.messages) + extra,
                )
                self.overflow, after = step_overflow_shrunk(self.overflow, shrunk, self.config)
                if isinstance(after, SendShrunk):
                    loop.on_event(Notice(OVERFLOW_NOTICE.format(
                        window=f"{window:,}-token " if window else "",
                        before=result.chars_before, after=result.chars_after)))
                return after
            case _ as unreachable:
                assert_never(unreachable)

    def step_went_through(self) -> None:
        """A request was accepted: overflow retries start again from zero."""
        self.overflow = OverflowState()

    async def relieve(
        self, loop: GovernedLoop, tools: tuple[dict[str, Any], ...], output_reserve: int
    ) -> PauseForPressure | None:
        """Compact or summarize ``loop.session.messages`` until the governor sees no
        pressure. Returns None to go on, or the governor's pause (``why``: the banner's words)."""
        window = await context_window_of(loop.model, self.config, self.learned)
        budget = usable_budget(window, output_reserve) if window else NO_BUDGET
        extra_tokens = tools_tokens(tools)
        messages = loop.session.messages
        fixed = extra_tokens + self.tally.tokens(messages[:protected_prefix_end(messages)])
        chars = tool_result_chars(window, output_reserve, self.config, fixed)
        if chars is not None:  # tools cut their results to fit this window at the source
            loop.ctx.result_max_chars = chars
        while True:
            observation = self._observe(loop.session.messages, budget, extra_tokens)
            self.state, decision = step_governor(self.state, observation, self.config)
            match decision:
                case NoPressure():
                    self.context = context_percent(observation.prompt_tokens,
                                                   None if budget == NO_BUDGET else budget)
                    return None
                case Compact(reason=reason):
                    self._compact(loop, reason, budget - extra_tokens)
                case Summarize():
                    if not await self._summarize(loop, budget, output_reserve):
                        pause = pressure_pause(observation, self.config)
                        return self._paused(loop, pause, observation)
                case PauseForPressure():
                    return self._paused(loop, decision, observation)
                case _ as unreachable:
                    assert_never(unreachable)

    def _paused(self, loop: GovernedLoop, pause: PauseForPressure,
                observation: PressureObservation) -> PauseForPressure:
        """``pause``, once the loop's listeners have its event and the numbers it paused on."""
        limit = observation.limit_mb if observation.limit_mb is not None \
            else self.config.memory_limit_mb
        loop.on_event(MemoryPressurePause(
            pause.reason, pause.why, observation.prompt_tokens, observation.budget_tokens,
            observation.rss_mb, limit))
        return pause

    def _observe(
        self, messages: list[dict[str, Any]], budget: int, extra_tokens: int
    ) -> PressureObservation:
        rss = read_rss_mb() if self.config.memory_limit_mb is not None else None
        return PressureObservation(
            prompt_tokens=self.tally.tokens(messages) + extra_tokens,
            budget_tokens=budget,
            rss_mb=rss,
        )

    def _compact(self, loop: GovernedLoop, reason: PressureReason, target: int) -> None:
        messages = loop.session.messages
        result = compact_for_pressure(messages, reason, target, self.config,
                                      loop.ctx.result_max_chars)  # the passes: the core's
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
                                       loop.watch, f"summarizing with {model.name}",
                                       on_usage=loop.session.add_usage)
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

